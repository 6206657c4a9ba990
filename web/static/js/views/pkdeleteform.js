// Delete all items of a partition key: one input per component of the
// container's partition key (all of them, for a hierarchical key), a
// confirmation, then POST …/operations/partitionkeydelete. Below the
// form, the container's deletes still in progress, refreshed after each
// delete, since the server goes on deleting after it has answered.

import { Notice, busy, confirmDialog, field, h, uid } from "../dom.js";
import { describePartitionKey, parsePartitionKeyValue } from "../model.js";
import { partitionDeletesCard } from "./pkdeletestatus.js";

/**
 * partitionDeletePanel returns {el, focus} for a container (page) whose
 * partition key has at least one path. onDeleted runs (and is awaited)
 * after a delete the server accepted; onClose closes the panel.
 */
export function partitionDeletePanel({ ctx, page, onDeleted, onClose }) {
  const paths = page.container.partitionKey?.paths ?? [];
  const notice = new Notice();
  const hintId = uid("pk-delete-hint");
  const inputs = paths.map(() =>
    h("input", { type: "text", class: "mono", required: true, autocomplete: "off", spellcheck: "false", "aria-describedby": hintId }),
  );
  const status = partitionDeletesCard(ctx, page);
  const titleId = uid("pk-delete-title");
  const form = h(
    "form",
    { class: "card pk-delete", "aria-labelledby": titleId },
    h("h2", { id: titleId }, "Delete all items of a partition key"),
    h(
      "p",
      { class: "hint" },
      "Every item with this partition key is gone from reads at once; the server then deletes them in the background. Items written to the partition afterwards are kept.",
    ),
    paths.map((path, i) => field(`Value of ${path}`, inputs[i])),
    h("p", { id: hintId, class: "hint" }, 'Text is a string. Write 5, true, false or null for those JSON values, and "5" for a string that looks like one.'),
    notice.el,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "button danger" }, "Delete items…"),
      h("button", { type: "button", class: "button ghost", onclick: onClose }, "Close"),
    ),
  );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    const parsed = inputs.map((input) => parsePartitionKeyValue(input.value));
    parsed.forEach((p, i) => inputs[i].setAttribute("aria-invalid", String(Boolean(p.error))));
    const bad = parsed.findIndex((p) => p.error);
    if (bad >= 0) {
      notice.error(`${paths[bad]}: ${parsed[bad].error}`);
      inputs[bad].focus();
      return;
    }
    const pk = parsed.map((p) => p.value);
    const shown = describePartitionKey(pk);
    const ok = await confirmDialog(`Delete every item with partition key ${shown} from container "${page.coll}"? This cannot be undone.`, "Delete items");
    if (!ok) return;
    await busy(form, async () => {
      try {
        await ctx.client.deletePartition(page.db, page.coll, pk);
      } catch (e) {
        notice.error(e);
        return;
      }
      notice.ok(`Deleted the items of partition key ${shown}: they are gone from reads, and the server removes them in the background.`);
      await Promise.all([onDeleted(), status.refresh()]);
    });
  });

  return { el: h("div", { class: "side-panel" }, form, status.el), focus: () => inputs[0]?.focus({ preventScroll: true }) };
}
