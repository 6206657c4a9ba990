// The container page of an item's resource token. The token grants that
// item alone, not even a read of its container, so the page knows
// neither the container's partition key path nor the item's partition
// key, and cannot list anything. The user gives the item's partition
// key value; the page reads the item and opens it in the editor (read
// only for a Read permission), whose saves and deletes send that same
// partition key.

import { Notice, busy, field, h, replace, uid } from "../dom.js";
import { parsePartitionKey } from "../model.js";
import { itemEditor } from "./editor.js";

/** renderGrantedItem draws the item's form into el for page, a
 * ContainerPage of ctx.grant's container. */
export function renderGrantedItem(el, ctx, page) {
  const id = ctx.grant.item;
  const notice = new Notice();
  const titleId = uid("granted-item-title");
  const input = h("input", { type: "text", name: "partitionKey", class: "mono", required: true, autocomplete: "off", spellcheck: "false" });
  input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
  const slot = h("div", { class: "editor-slot" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": titleId },
    h("h2", { id: titleId }, "The granted item"),
    h("p", { class: "hint" }, "This resource token grants item ", h("code", {}, id), " and not its container, so nothing can be listed: give the item's partition key to read it."),
    field(
      "Partition key value",
      input,
      'Text is a string. Write 5, true, false or null for those JSON values, "5" for a string that looks like one, and a JSON array such as ["a", 5] for a hierarchical key.',
    ),
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Read item")),
  );

  let pk = null;
  const open = (item) => {
    const editor = itemEditor({
      client: ctx.client,
      db: page.db,
      coll: page.coll,
      container: null,
      item,
      readOnly: ctx.grant.readOnly,
      partitionKey: pk,
      onSaved: (saved, message) => {
        open(saved);
        notice.ok(message);
      },
      onDeleted: (message) => {
        slot.replaceChildren();
        notice.ok(message);
      },
      onClose: () => slot.replaceChildren(),
    });
    replace(slot, editor.el);
    editor.focus();
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    const parsed = parsePartitionKey(input.value);
    if (parsed.error) {
      input.setAttribute("aria-invalid", "true");
      notice.error(parsed.error);
      input.focus();
      return;
    }
    await busy(form, async () => {
      try {
        const item = await ctx.client.item(page.db, page.coll, id, parsed.value);
        pk = parsed.value;
        open(item);
      } catch (e) {
        slot.replaceChildren();
        notice.error(e);
      }
    });
  });
  replace(el, form, slot);
}
