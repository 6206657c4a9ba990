// The Scripts tab: a container's stored procedures, triggers (with when
// and on what each runs) and user-defined functions, each list with a
// "New" action, and beside or below them an editor to write, save and
// delete one; under a saved stored procedure's editor, a form to run it.

import { Notice, h, replace, uid } from "../dom.js";
import { SCRIPT_KINDS, scriptKind } from "../scriptkinds.js";
import { scriptEditor } from "./scripteditor.js";
import { storedProcedureRun } from "./sprocrun.js";

export function renderScripts(el, ctx, page) {
  new ScriptsView(el, ctx, page).start();
}

class ScriptsView {
  constructor(el, ctx, page) {
    this.el = el;
    this.ctx = ctx;
    this.page = page;
    this.notice = new Notice();
    // Per kind: the element its list is drawn in, its "New" button, and
    // the scripts last read (none while unread or after a failed read).
    this.lists = new Map(SCRIPT_KINDS.map((k) => [k.kind, h("div", { class: "script-list" }, h("p", { class: "muted" }, "Loading…"))]));
    this.newButtons = new Map();
    this.scripts = new Map();
    // open is the script in the editor: {kind, id}, id null for a new one.
    this.open = null;
    this.loads = 0;
    this.editorSlot = h("div", { class: "editor-slot" });
    this.layout = null;
  }

  start() {
    const refresh = h("button", { type: "button", class: "button", "aria-label": "Refresh scripts", onclick: () => this.load() }, "Refresh");
    this.layout = h("div", { class: "scripts-layout" }, h("div", { class: "scripts-lists" }, SCRIPT_KINDS.map((k) => this.section(k))), this.editorSlot);
    replace(
      this.el,
      h(
        "div",
        { class: "toolbar" },
        h("p", { class: "hint" }, "Stored procedures run here, in one logical partition; triggers run on writes that name them; queries call user-defined functions as udf.name(…)."),
        h("div", { class: "toolbar-actions" }, refresh),
      ),
      this.notice.el,
      this.layout,
    );
    this.load();
  }

  section(k) {
    const titleId = uid(`scripts-${k.kind}-title`);
    // The visible text is "New"; the name says which list it adds to.
    const create = h("button", { type: "button", class: "button small", "aria-label": `New ${k.noun}`, onclick: () => this.openEditor(k.kind, null) }, "New");
    this.newButtons.set(k.kind, create);
    return h("section", { class: "card scripts-card", "aria-labelledby": titleId }, h("div", { class: "card-head" }, h("h2", { id: titleId }, k.title), create), this.lists.get(k.kind));
  }

  /** load reads the three lists and draws them. */
  async load() {
    // Only the latest load draws: a slow answer must not overwrite a newer one.
    const seq = ++this.loads;
    try {
      const lists = await Promise.all(SCRIPT_KINDS.map((k) => this.ctx.client.scripts(this.page.db, this.page.coll, k.kind)));
      if (seq !== this.loads) return;
      SCRIPT_KINDS.forEach((k, i) => this.scripts.set(k.kind, lists[i]));
    } catch (e) {
      if (seq !== this.loads) return;
      this.scripts.clear();
      this.notice.error(e);
    }
    this.drawLists();
  }

  drawLists() {
    for (const { kind } of SCRIPT_KINDS) this.drawList(kind);
  }

  /** drawList redraws one kind's list, keeping keyboard focus on the
   * script it was on. */
  drawList(kind) {
    const el = this.lists.get(kind);
    const focusedId = el.contains(document.activeElement) ? document.activeElement.closest("tr")?.dataset.id : undefined;
    const scripts = this.scripts.get(kind);
    if (!scripts) {
      el.replaceChildren();
      return;
    }
    if (!scripts.length) {
      replace(el, h("p", { class: "muted empty-list" }, `No ${scriptKind(kind).title.toLowerCase()} yet.`));
      return;
    }
    const trigger = kind === "triggers";
    const head = h("tr", {}, h("th", { scope: "col" }, "id"), trigger ? [h("th", { scope: "col" }, "Type"), h("th", { scope: "col" }, "Operation")] : null);
    const rows = scripts.map((script) => {
      const open = this.open?.kind === kind && this.open.id === script.id;
      const button = h("button", { type: "button", class: "link mono", "aria-current": open ? "true" : null, onclick: () => this.openEditor(kind, script) }, script.id);
      return h(
        "tr",
        { "data-id": script.id },
        h("td", {}, button),
        trigger ? [h("td", {}, script.triggerType ?? "—"), h("td", {}, script.triggerOperation ?? "—")] : null,
      );
    });
    replace(el, h("table", { class: "table compact script-table" }, h("thead", {}, head), h("tbody", {}, rows)));
    if (focusedId !== undefined) this.rowButton(kind, focusedId)?.focus();
  }

  rowButton(kind, id) {
    return [...this.lists.get(kind).querySelectorAll("tr[data-id]")].find((tr) => tr.dataset.id === id)?.querySelector("button") ?? null;
  }

  /** openEditor shows a script (null: a new one of kind) beside or below
   * the lists and moves focus into it. */
  openEditor(kind, script) {
    this.notice.clear();
    this.open = { kind, id: script?.id ?? null };
    const editor = scriptEditor({
      client: this.ctx.client,
      db: this.page.db,
      coll: this.page.coll,
      kind,
      script,
      onSaved: async (saved, message) => {
        await this.load();
        this.openEditor(kind, saved);
        this.notice.ok(message);
      },
      onDeleted: async (message) => {
        this.closeEditor();
        await this.load();
        this.notice.ok(message);
        // The script's row is gone: its list's "New" is the nearest place.
        this.newButtons.get(kind).focus();
      },
      onClose: () => this.closeEditor(),
    });
    const run = kind === "sprocs" && script ? storedProcedureRun({ client: this.ctx.client, page: this.page, id: script.id }) : null;
    replace(this.editorSlot, h("div", { class: "side-panel" }, editor.el, run?.el));
    this.layout.classList.add("with-editor");
    this.drawLists();
    editor.el.scrollIntoView({ block: "nearest" });
    editor.focus();
  }

  /** closeEditor empties the editor's place; focus, if it was there,
   * goes back to the script's row (or its list's "New"). */
  closeEditor() {
    const open = this.open;
    const hadFocus = this.editorSlot.contains(document.activeElement);
    this.open = null;
    this.editorSlot.replaceChildren();
    this.layout.classList.remove("with-editor");
    this.drawLists();
    if (hadFocus && open) (this.rowButton(open.kind, open.id) ?? this.newButtons.get(open.kind)).focus();
  }
}
