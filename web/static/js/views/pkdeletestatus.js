// The deletes by partition key still in progress for a container, from
// GET /_ebb/containers/{db}/{coll}/partitiondeletes: the items of each
// are already gone from reads, and the server deletes them in the
// background at a tenth of the container's throughput, so a large
// partition takes a while. Shown beside the TTL purge statistics (both
// are work the server does after the fact) and under the delete form.

import { Notice, h, replace, uid } from "../dom.js";
import { formatRelative, formatTime } from "../format.js";
import { describePartitionKey } from "../model.js";

/**
 * partitionDeletesCard returns {el, refresh}: a card listing the deletes
 * in progress, loaded once now. refresh reloads it (after a delete, or
 * from its button) and resolves when it has drawn.
 */
export function partitionDeletesCard(ctx, page) {
  const notice = new Notice();
  const list = h("div", { class: "pk-deletes" }, h("p", { class: "muted" }, "Loading…"));
  const titleId = uid("pk-deletes-title");
  // Only the latest load draws: an older answer must not overwrite a newer one.
  let loads = 0;
  const refresh = async () => {
    const seq = ++loads;
    notice.clear();
    try {
      const deletes = await ctx.client.partitionDeletes(page.db, page.coll);
      if (seq === loads) replace(list, drawDeletes(deletes, ctx.clock.now()));
    } catch (e) {
      if (seq !== loads) return;
      list.replaceChildren();
      notice.error(e);
    }
  };
  // The visible text stays "Refresh"; the name says which of the tab's
  // refresh buttons this is.
  const button = h("button", { type: "button", class: "button", "aria-label": "Refresh deletes in progress", onclick: refresh }, "Refresh");
  const el = h(
    "section",
    { class: "card", "aria-labelledby": titleId },
    h("div", { class: "card-head" }, h("h2", { id: titleId }, "Deletes by partition key in progress"), button),
    notice.el,
    list,
  );
  refresh();
  return { el, refresh };
}

function drawDeletes(deletes, now) {
  if (!deletes.length) return h("p", { class: "muted" }, "No deletes by partition key in progress.");
  const rows = deletes.map((d) =>
    h(
      "tr",
      {},
      h("td", { "data-label": "Partition key", class: "mono" }, Array.isArray(d.partitionKey) ? describePartitionKey(d.partitionKey) : JSON.stringify(d.partitionKey)),
      h("td", { "data-label": "Requested" }, requested(d.requestedAt, now)),
      h("td", { "data-label": "Items left", class: "num" }, remaining(d)),
    ),
  );
  return h(
    "table",
    { class: "table responsive compact" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Partition key"), h("th", { scope: "col" }, "Requested"), h("th", { scope: "col", class: "num" }, "Items left"))),
    h("tbody", {}, rows),
  );
}

function requested(at, now) {
  if (typeof at !== "number") return "—";
  return [h("time", { title: String(at) }, formatTime(at)), " ", h("span", { class: "muted small" }, `(${formatRelative(at, now)})`)];
}

/** remaining writes the items left; the server stops counting at a
 * million and says so. */
function remaining(d) {
  const n = Number(d.remainingItems ?? 0).toLocaleString("en-US");
  return d.remainingCapped ? `at least ${n}` : n;
}
