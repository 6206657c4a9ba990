// The Query tab: a SQL editor, the results as JSON, the request charge
// and the server's query metrics, one page at a time. A query that ranks
// its rows (by VectorDistance, or ORDER BY RANK) also shows them in a
// table with each row's rank, since a full-text score cannot be
// projected and the order is all there is to see; and a container with
// vector or full-text paths offers example queries over them.

import { Notice, busy, h, replace } from "../dom.js";
import { formatCharge, formatJSON } from "../format.js";
import { parseQueryMetrics } from "../model.js";
import { EXAMPLE_WORD, isRankedQuery, searchExamples } from "../search.js";

const PAGE_SIZE = 100;

/** Friendlier names for the metrics the server reports. */
const METRIC_LABELS = {
  totalExecutionTimeInMs: "Total execution time (ms)",
  queryCompileTimeInMs: "Compile time (ms)",
  queryLogicalPlanBuildTimeInMs: "Logical plan time (ms)",
  queryPhysicalPlanBuildTimeInMs: "Physical plan time (ms)",
  queryOptimizationTimeInMs: "Optimization time (ms)",
  VMExecutionTimeInMs: "Runtime execution time (ms)",
  indexLookupTimeInMs: "Index lookup time (ms)",
  documentLoadTimeInMs: "Document load time (ms)",
  systemFunctionExecuteTimeInMs: "System function time (ms)",
  userFunctionExecuteTimeInMs: "User function time (ms)",
  retrievedDocumentCount: "Retrieved documents",
  retrievedDocumentSize: "Retrieved size (bytes)",
  outputDocumentCount: "Output documents",
  outputDocumentSize: "Output size (bytes)",
  writeOutputTimeInMs: "Write output time (ms)",
  indexUtilizationRatio: "Index utilization ratio",
};

export function renderQuery(el, ctx, page) {
  const notice = new Notice();
  const text = h("textarea", { class: "mono query-editor", rows: "5", spellcheck: "false", autocomplete: "off", "aria-label": "SQL query", "aria-describedby": "query-keys" });
  text.value = "SELECT * FROM c";
  const form = h(
    "form",
    { class: "card query-form" },
    text,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Run query"), h("span", { id: "query-keys", class: "hint" }, "Ctrl+Enter runs the query.")),
    examplesMenu(page.container, (sql) => {
      text.value = sql;
      text.focus();
    }),
  );
  const results = h("div", { class: "query-results" });
  replace(el, form, notice.el, results);

  let state = null;
  const run = async (next) => {
    notice.clear();
    await busy(form, async () => {
      try {
        const res = await ctx.client.queryItems(page.db, page.coll, next ? state.sql : text.value, { maxItemCount: PAGE_SIZE, metrics: true, continuation: next ? state.continuation : null });
        const docs = res.body?.Documents ?? [];
        state = next
          ? { ...state, docs: state.docs.concat(docs), charge: state.charge + res.charge, pages: state.pages + 1, lastCharge: res.charge, continuation: res.continuation, metrics: res.metrics }
          : { sql: text.value, docs, charge: res.charge, pages: 1, lastCharge: res.charge, continuation: res.continuation, metrics: res.metrics };
        drawResults(results, state, () => run(true));
      } catch (e) {
        // The error alone shows: results of an earlier query under it
        // would read as the answer to this one.
        state = null;
        results.replaceChildren();
        notice.error(e);
      }
    });
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run(false);
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}

function drawResults(el, state, loadMore) {
  const n = state.docs.length;
  const pages = state.pages > 1 ? ` over ${state.pages} pages (last page ${formatCharge(state.lastCharge)})` : "";
  const stats = h(
    "dl",
    { class: "stats", role: "status" },
    stat("Results", `${n}${state.continuation ? "+" : ""}`),
    stat("Request charge", `${formatCharge(state.charge)}${pages}`),
  );
  const more = state.continuation ? h("button", { type: "button", class: "button", onclick: loadMore }, "Load more results") : null;
  const ranked = isRankedQuery(state.sql) ? rankedTable(state.docs) : null;
  replace(
    el,
    h(
      "div",
      { class: "card" },
      stats,
      metricsTable(state.metrics),
      h("h2", { class: "visually-hidden" }, "Results"),
      ranked,
      h("pre", { class: "json", tabindex: "0", "aria-label": "Query results as JSON" }, formatJSON(state.docs)),
      more,
    ),
  );
}

/**
 * examplesMenu offers a vector search, a full-text ranking and a hybrid
 * (RRF) query over the container's own paths; choosing one puts it in
 * the editor to run or change. Nothing shows for a container without a
 * vector embedding or full-text policy.
 */
function examplesMenu(container, use) {
  const examples = searchExamples(container);
  if (!examples.length) return null;
  return h(
    "details",
    { class: "examples" },
    h("summary", {}, "Examples"),
    h("p", { class: "hint" }, `Search queries over this container's vector and full-text paths. Choosing one puts it in the editor: replace the vector and the word "${EXAMPLE_WORD}" with your own.`),
    h(
      "div",
      { class: "actions" },
      examples.map((ex) => h("button", { type: "button", class: "button small", "data-example": ex.id, onclick: () => use(ex.sql) }, ex.label)),
    ),
  );
}

/**
 * rankedTable shows ranked rows in their order with their rank (1 is the
 * most similar or relevant): a column per property, in the order the
 * rows first have them, or one Value column for rows that are not
 * objects (SELECT VALUE).
 */
function rankedTable(docs) {
  const isObject = (d) => d !== null && typeof d === "object" && !Array.isArray(d);
  const columns = [];
  for (const d of docs) {
    for (const k of isObject(d) ? Object.keys(d) : []) if (!columns.includes(k)) columns.push(k);
  }
  const values = docs.some((d) => !isObject(d));
  const cell = (v) => {
    if (v === undefined) return h("td", {});
    return h("td", { class: typeof v === "number" ? "num" : null }, typeof v === "string" ? v : JSON.stringify(v));
  };
  const rows = docs.map((d, i) =>
    h("tr", {}, h("th", { scope: "row", class: "num" }, String(i + 1)), columns.map((k) => cell(isObject(d) ? d[k] : undefined)), values ? cell(isObject(d) ? undefined : d) : null),
  );
  return h(
    "div",
    { class: "table-wrap ranked" },
    h(
      "table",
      { class: "table compact" },
      h("caption", {}, "Ranked results: 1 is the most similar or relevant."),
      h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "Rank"), columns.map((k) => h("th", { scope: "col" }, k)), values ? h("th", { scope: "col" }, "Value") : null)),
      h("tbody", {}, rows),
    ),
  );
}

function stat(label, value) {
  return h("div", { class: "stat" }, h("dt", {}, label), h("dd", {}, value));
}

function metricsTable(header) {
  const metrics = parseQueryMetrics(header);
  if (!metrics.length) return null;
  return h(
    "details",
    { class: "metrics" },
    h("summary", {}, "Query metrics (last page)"),
    h(
      "table",
      { class: "table compact" },
      h("tbody", {}, metrics.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, METRIC_LABELS[k] ?? k), h("td", { class: "num" }, v)))),
    ),
  );
}
