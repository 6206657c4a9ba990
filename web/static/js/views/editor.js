// The item editor: the item as JSON, checked as you type, saved with a
// create (new item) or a replace guarded by the item's etag.

import { busy, confirmDialog, h, uid } from "../dom.js";
import { formatJSON } from "../format.js";
import { newItemTemplate, parseItem, partitionKeyOf } from "../model.js";

/**
 * itemEditor returns {el, focus} (focus does not scroll). item is null for a new item. onSaved
 * (saved item, message), onDeleted(message) and onClose are callbacks.
 * readOnly shows the item with nothing to save or delete (a resource
 * token's Read permission). partitionKey is the item's partition key
 * values where the container, and so its partition key paths, cannot
 * be read (an item's resource token); otherwise they are read from the
 * item.
 */
export function itemEditor({ client, db, coll, container, item, readOnly = false, partitionKey = null, onSaved, onDeleted, onClose }) {
  const isNew = item === null;
  const keyOf = (it) => partitionKey ?? partitionKeyOf(it, container);
  const checkId = uid("editor-check");
  const keysId = uid("editor-keys");
  const text = h("textarea", {
    class: "mono json-editor",
    spellcheck: "false",
    autocomplete: "off",
    rows: "16",
    "aria-label": "Item JSON",
    "aria-describedby": `${checkId} ${keysId}`,
  });
  text.value = formatJSON(isNew ? newItemTemplate(container) : item);
  text.readOnly = readOnly;
  const check = h("p", { id: checkId, class: "check", "aria-live": "polite" });
  const status = h("div", { class: "notice-area" });
  const save = readOnly ? null : h("button", { type: "submit", class: "button primary" }, isNew ? "Create item" : "Save");
  const del = isNew || readOnly ? null : h("button", { type: "button", class: "button danger" }, "Delete");
  const close = h("button", { type: "button", class: "button ghost", onclick: onClose }, "Close");
  const title = isNew ? "New item" : `Item ${item.id}`;
  const form = h(
    "form",
    { class: "card editor", "aria-label": title },
    h("h2", {}, title),
    text,
    check,
    h("p", { id: keysId, class: "hint" }, readOnly ? "Read only: this resource token's permission is Read." : "Ctrl+Enter saves. System properties (_rid, _ts, …) are set by the server."),
    status,
    h("div", { class: "actions" }, save, del, close),
  );

  // A new item's template has an empty id: that is not a mistake until
  // the user has typed or tried to save.
  let touched = !isNew;
  const validate = () => {
    const parsed = parseItem(text.value);
    const bad = touched && Boolean(parsed.error);
    check.textContent = bad ? parsed.error : parsed.error ? "" : "Valid JSON.";
    check.classList.toggle("bad", bad);
    text.setAttribute("aria-invalid", String(bad));
    if (save) save.disabled = bad;
    return parsed;
  };
  text.addEventListener("input", () => {
    touched = true;
    validate();
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  validate();

  const fail = (e) => status.replaceChildren(h("div", { class: "notice error", role: "alert" }, e.message));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (readOnly) return;
    touched = true;
    const parsed = validate();
    if (parsed.error) {
      text.focus();
      return;
    }
    status.replaceChildren();
    await busy(form, async () => {
      try {
        const saved = isNew
          ? await client.createItem(db, coll, parsed.item, keyOf(parsed.item))
          : await client.replaceItem(db, coll, item.id, parsed.item, keyOf(item), item._etag);
        await onSaved(saved, `${isNew ? "Created" : "Saved"} item ${saved.id}.`);
      } catch (e) {
        fail(e.status === 412 ? new Error("The item changed on the server since it was opened; close it and open it again.") : e);
      }
    });
  });

  del?.addEventListener("click", async () => {
    const ok = await confirmDialog(`Delete item "${item.id}"?`, "Delete item");
    if (!ok) return;
    try {
      await client.deleteItem(db, coll, item.id, keyOf(item));
      await onDeleted(`Deleted item ${item.id}.`);
    } catch (e) {
      fail(e);
    }
  });

  return { el: form, focus: () => text.focus({ preventScroll: true }) };
}
