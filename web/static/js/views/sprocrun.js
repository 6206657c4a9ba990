// Running a saved stored procedure: the logical partition it runs in
// (one value per partition key path, read as the Items tab's delete by
// partition key reads them), its arguments as a JSON array, checked
// before anything is sent, and what came back: the body the procedure
// set, the request charge, and what it wrote with console.log, which the
// page always asks the server to return.

import { Notice, busy, field, h, replace, uid } from "../dom.js";
import { formatCharge, formatJSON } from "../format.js";
import { parsePartitionKeyValue } from "../model.js";
import { parseArguments } from "../scriptkinds.js";

/**
 * storedProcedureRun returns {el} for the stored procedure id of a
 * container (page).
 */
export function storedProcedureRun({ client, page, id }) {
  const paths = page.container.partitionKey?.paths ?? [];
  const notice = new Notice();
  const pkHintId = uid("run-pk-hint");
  const inputs = paths.map(() =>
    h("input", { type: "text", class: "mono", required: true, autocomplete: "off", spellcheck: "false", "aria-describedby": pkHintId }),
  );
  const args = h("textarea", { class: "mono run-args", rows: "3", spellcheck: "false", autocomplete: "off", autocapitalize: "off" });
  args.value = "[]";
  const result = h("div", { class: "run-result" });
  const titleId = uid("run-title");
  const partition = paths.length
    ? h(
        "fieldset",
        {},
        h("legend", {}, "Partition key"),
        paths.map((path, i) => field(`Value of ${path}`, inputs[i])),
        h("p", { id: pkHintId, class: "hint" }, 'A procedure runs in one logical partition. Text is a string; write 5, true, false or null for those JSON values, and "5" for a string that looks like one.'),
      )
    : null;
  const form = h(
    "form",
    { class: "card script-run", "aria-labelledby": titleId },
    h("h2", { id: titleId }, `Run ${id}`),
    partition,
    field("Arguments (JSON array)", args, 'One element per parameter, for example ["a", 1]. Ctrl+Enter runs.'),
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Run")),
    result,
  );

  args.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    const pk = inputs.map((input) => parsePartitionKeyValue(input.value));
    pk.forEach((p, i) => inputs[i].setAttribute("aria-invalid", String(Boolean(p.error))));
    const badKey = pk.findIndex((p) => p.error);
    if (badKey >= 0) {
      notice.error(`${paths[badKey]}: ${pk[badKey].error}`);
      inputs[badKey].focus();
      return;
    }
    const argv = parseArguments(args.value);
    args.setAttribute("aria-invalid", String(Boolean(argv.error)));
    if (argv.error) {
      notice.error(argv.error);
      args.focus();
      return;
    }
    await busy(form, async () => {
      try {
        const res = await client.executeStoredProcedure(page.db, page.coll, id, pk.map((p) => p.value), argv.value);
        replace(result, drawResult(res));
      } catch (e) {
        // The error alone shows: an earlier run's result under it would
        // read as this run's.
        result.replaceChildren();
        notice.error(e);
      }
    });
  });

  return { el: form };
}

function drawResult({ body, charge, log }) {
  return [
    h("dl", { class: "stats", role: "status" }, h("div", { class: "stat" }, h("dt", {}, "Request charge"), h("dd", {}, formatCharge(charge)))),
    h("h3", {}, "Result"),
    h("pre", { class: "json", tabindex: "0", "aria-label": "Result as JSON" }, formatJSON(body ?? "")),
    h("h3", {}, "Log"),
    log
      ? h("pre", { class: "json script-log", tabindex: "0", "aria-label": "Script log" }, log)
      : h("p", { class: "muted" }, "The procedure wrote nothing with console.log."),
  ];
}
