// The script editor: a stored procedure's, trigger's or user-defined
// function's JavaScript, and a trigger's type and operation. Saving
// creates the script or replaces it, guarded by its etag. The page
// cannot compile JavaScript itself (the page's content security policy
// rightly forbids eval), so the server's compile on save is the syntax
// check: its message is shown, and the cursor goes to the line and
// column it names.

import { Notice, busy, confirmDialog, field, h, uid } from "../dom.js";
import { TRIGGER_OPERATIONS, TRIGGER_TYPES, compileErrorPosition, offsetAt, scriptKind, scriptResource, triggerChoice } from "../scriptkinds.js";

/**
 * scriptEditor returns {el, focus} (focus does not scroll). kind is
 * "sprocs", "triggers" or "udfs"; script is null for a new one.
 * onSaved(saved script, message), onDeleted(message) and onClose are
 * callbacks.
 */
export function scriptEditor({ client, db, coll, kind, script, onSaved, onDeleted, onClose }) {
  const { noun, template } = scriptKind(kind);
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  const isNew = script === null;
  const notice = new Notice();
  // A saved script keeps its id: a replace names the script by it.
  const id = h("input", {
    type: "text",
    class: "mono",
    required: true,
    readonly: !isNew,
    autocomplete: "off",
    spellcheck: "false",
    pattern: "[^\\/\\\\#?]+",
    title: 'An id cannot contain "/", "\\", "#" or "?".',
  });
  id.value = isNew ? "" : script.id;
  const body = h("textarea", { class: "mono script-editor", rows: "14", wrap: "off", spellcheck: "false", autocomplete: "off", autocapitalize: "off" });
  body.value = isNew ? template : (script.body ?? "");
  const trigger = kind === "triggers" ? triggerFields(script) : null;
  const save = h("button", { type: "submit", class: "button primary" }, isNew ? `Create ${noun}` : "Save");
  const del = isNew ? null : h("button", { type: "button", class: "button danger" }, "Delete");
  const close = h("button", { type: "button", class: "button ghost", onclick: onClose }, "Close");
  const title = isNew ? `New ${noun}` : `${Noun} ${script.id}`;
  const form = h(
    "form",
    { class: "card editor", "aria-label": title },
    h("h2", {}, title),
    field(`${Noun} id`, id),
    trigger?.el,
    field("Body (JavaScript)", body, "Ctrl+Enter saves. The server compiles the script when it is saved and says where any mistake is."),
    notice.el,
    h("div", { class: "actions" }, save, del, close),
  );

  body.addEventListener("input", () => body.setAttribute("aria-invalid", "false"));
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !(event.target instanceof HTMLButtonElement)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  /** fail shows why a save did not happen; a compile error also puts
   * the cursor where the server says the mistake is. */
  const fail = (e) => {
    if (e.status === 412) {
      notice.error(`The ${noun} changed on the server since it was opened; close it and open it again.`);
      return;
    }
    notice.error(e);
    const at = e.status === 400 ? compileErrorPosition(e.message) : null;
    if (!at) return;
    body.setAttribute("aria-invalid", "true");
    const offset = offsetAt(body.value, at.line, at.column);
    body.focus();
    body.setSelectionRange(offset, offset);
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    const resource = scriptResource(kind, { id: id.value.trim(), body: body.value, ...trigger?.read() });
    // The controls are disabled while the request runs, so a failure is
    // shown (and the cursor placed) once they are enabled again.
    let failed = null;
    await busy(form, async () => {
      try {
        const saved = isNew ? await client.createScript(db, coll, kind, resource) : await client.replaceScript(db, coll, kind, script.id, resource, script._etag);
        await onSaved(saved, `${isNew ? "Created" : "Saved"} ${noun} ${saved.id}.`);
      } catch (e) {
        failed = e;
      }
    });
    if (failed) fail(failed);
  });

  del?.addEventListener("click", async () => {
    const ok = await confirmDialog(`Delete ${noun} "${script.id}"? This cannot be undone.`, `Delete ${noun}`);
    if (!ok) return;
    notice.clear();
    try {
      await client.deleteScript(db, coll, kind, script.id);
    } catch (e) {
      notice.error(e);
      return;
    }
    await onDeleted(`Deleted ${noun} ${script.id}.`);
  });

  return { el: form, focus: () => (isNew ? id : body).focus({ preventScroll: true }) };
}

/** triggerFields are a trigger's type and operation: {el, read}. */
function triggerFields(script) {
  const hintId = uid("trigger-hint");
  const type = choiceSelect(TRIGGER_TYPES, script?.triggerType, hintId);
  const operation = choiceSelect(TRIGGER_OPERATIONS, script?.triggerOperation, hintId);
  return {
    el: h(
      "div",
      {},
      h("div", { class: "field-row" }, field("Trigger type", type), field("Trigger operation", operation)),
      h("p", { id: hintId, class: "hint trigger-hint" }, "A pre-trigger runs before the write and can change the item; a post-trigger runs after it, in the same transaction. A trigger runs only for writes that name it."),
    ),
    read: () => ({ triggerType: type.value, triggerOperation: operation.value }),
  };
}

function choiceSelect(choices, current, hintId) {
  const choice = triggerChoice(choices, current);
  const select = h("select", { "aria-describedby": hintId }, choice.choices.map((c) => h("option", { value: c }, c)));
  select.value = choice.value;
  return select;
}
