// The Items tab: a paged list of a container's items with when each one
// expires, an editor to view, create, change and delete items, and a
// panel to delete all items of a partition key. The editor and that
// panel share the place beside the list.
//
// With a resource token (ctx.grant) a Read permission's items open read
// only, with no New item, and no token gets the delete by partition key
// panel, whose list of deletes in progress is one of Ebb's /_ebb routes
// (a key's). A permission limited to one partition key refuses the
// list's cross-partition query: the server's 403 message shows.

import { Notice, h, replace } from "../dom.js";
import { formatCharge, formatRelative, formatTime } from "../format.js";
import { describePartitionKey, partitionKeyOf } from "../model.js";
import { expiresAt, isExpired, ttlSetting, TTL_OFF } from "../ttl.js";
import { itemEditor } from "./editor.js";
import { partitionDeletePanel } from "./pkdeleteform.js";

const PAGE_SIZE = 50;

export function renderItems(el, ctx, page) {
  new ItemsView(el, ctx, page).start();
}

class ItemsView {
  constructor(el, ctx, page) {
    this.el = el;
    this.ctx = ctx;
    this.page = page;
    this.items = [];
    this.continuation = null;
    this.charge = 0;
    this.where = "";
    this.loads = 0;
    this.notice = new Notice();
    this.summary = h("p", { class: "summary", role: "status" });
    this.body = h("tbody", {});
    this.more = h("button", { type: "button", class: "button", hidden: true, onclick: () => this.load(false) }, "Load more");
    this.editorSlot = h("div", { class: "editor-slot" });
  }

  start() {
    // A new reading redraws when each item expires; a move of the clock
    // reloads the list, since items it expired are gone from reads.
    this.ctx.clock.addEventListener("change", () => this.drawRows(), { signal: this.ctx.signal });
    this.ctx.clock.addEventListener("advance", () => this.load(true), { signal: this.ctx.signal });
    const table = h(
      "table",
      { class: "table responsive items-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "id"),
          h("th", { scope: "col" }, "Partition key"),
          h("th", { scope: "col", class: "col-ts" }, "Last write (_ts)"),
          h("th", { scope: "col" }, "ttl"),
          h("th", { scope: "col" }, "Expires at"),
        ),
      ),
      this.body,
    );
    replace(
      this.el,
      this.toolbar(),
      this.notice.el,
      h("div", { class: "items-layout" }, h("div", { class: "items-list" }, this.summary, h("div", { class: "table-wrap" }, table), this.more), this.editorSlot),
    );
    this.load(true);
  }

  toolbar() {
    const where = h("input", { type: "text", name: "where", class: "mono", spellcheck: "false", autocomplete: "off", placeholder: "c.category = 'tools'", "aria-label": "Filter: WHERE clause" });
    const filter = h(
      "form",
      { class: "filter", role: "search" },
      h("span", { class: "filter-prefix mono", "aria-hidden": "true" }, "SELECT * FROM c WHERE"),
      where,
      h("button", { type: "submit", class: "button" }, "Apply filter"),
    );
    filter.addEventListener("submit", (event) => {
      event.preventDefault();
      this.where = where.value.trim();
      this.load(true);
    });
    const grant = this.ctx.grant;
    const create = grant?.readOnly ? null : h("button", { type: "button", class: "button primary", onclick: () => this.openEditor(null) }, "New item");
    const refresh = h("button", { type: "button", class: "button", onclick: () => this.refresh() }, "Refresh");
    const hasKey = (this.page.container.partitionKey?.paths ?? []).length > 0;
    const deletePartition = hasKey && !grant ? h("button", { type: "button", class: "button danger", onclick: () => this.openPartitionDelete() }, "Delete all items of a partition key…") : null;
    return h("div", { class: "toolbar" }, h("div", { class: "toolbar-actions" }, create, refresh, deletePartition), filter);
  }

  sql() {
    return this.where ? `SELECT * FROM c WHERE ${this.where}` : "SELECT * FROM c";
  }

  async refresh() {
    try {
      await this.ctx.clock.refresh();
    } catch (e) {
      this.notice.error(e);
    }
    await this.load(true);
  }

  /** load reads the first page (reset) or the next one. */
  async load(reset) {
    // Only the latest load draws: a slow page must not overwrite a newer one.
    const seq = ++this.loads;
    if (reset) {
      this.continuation = null;
      this.summary.textContent = "Loading…";
    }
    this.notice.clear();
    try {
      const res = await this.ctx.client.queryItems(this.page.db, this.page.coll, this.sql(), { maxItemCount: PAGE_SIZE, continuation: reset ? null : this.continuation });
      if (seq !== this.loads) return;
      const docs = res.body?.Documents ?? [];
      this.items = reset ? docs : this.items.concat(docs);
      this.charge = (reset ? 0 : this.charge) + res.charge;
      this.continuation = res.continuation;
    } catch (e) {
      if (seq !== this.loads) return;
      if (reset) this.items = [];
      this.notice.error(e);
    }
    this.drawRows();
  }

  drawRows() {
    const n = this.items.length;
    const more = this.continuation ? " (more available)" : "";
    this.summary.textContent = `${n} item${n === 1 ? "" : "s"} loaded${more} · ${formatCharge(this.charge)}`;
    this.more.hidden = !this.continuation;
    if (!n) {
      replace(this.body, h("tr", {}, h("td", { colspan: "5", class: "muted empty" }, this.where ? "No items match the filter." : "No items yet.")));
      return;
    }
    replace(this.body, this.items.map((item) => this.row(item)));
  }

  row(item) {
    const container = this.page.container;
    const open = h("button", { type: "button", class: "link mono item-id", title: item.id, onclick: () => this.openEditor(item) }, item.id);
    const ttl = "ttl" in item ? JSON.stringify(item.ttl) : "—";
    return h(
      "tr",
      { "data-id": item.id },
      h("td", { "data-label": "id" }, open),
      h("td", { "data-label": "Partition key", class: "mono" }, describePartitionKey(partitionKeyOf(item, container))),
      h("td", { "data-label": "Last write (_ts)", class: "col-ts" }, typeof item._ts === "number" ? h("time", { title: String(item._ts) }, formatTime(item._ts)) : "—"),
      h("td", { "data-label": "ttl", class: "mono" }, ttl),
      h("td", { "data-label": "Expires at", class: "expires" }, this.expiryCell(item)),
    );
  }

  expiryCell(item) {
    const defaultTtl = this.page.container.defaultTtl;
    const at = expiresAt(item, defaultTtl);
    if (at === null) {
      let why = "no default";
      if (ttlSetting(defaultTtl).mode === TTL_OFF) why = "TTL off";
      else if (item.ttl === -1) why = "ttl -1";
      return h("span", {}, h("span", { class: "never" }, "never"), " ", h("span", { class: "muted small" }, `(${why})`));
    }
    const now = this.ctx.clock.now();
    const expired = isExpired(at, now);
    return h(
      "span",
      {},
      h("time", { class: expired ? "expired" : null, title: String(at) }, formatTime(at)),
      " ",
      h("span", { class: expired ? "relative expired small" : "relative muted small" }, expired ? `(expired ${formatRelative(at, now)})` : `(${formatRelative(at, now)})`),
    );
  }

  openEditor(item) {
    this.notice.clear();
    const editor = itemEditor({
      client: this.ctx.client,
      db: this.page.db,
      coll: this.page.coll,
      container: this.page.container,
      item,
      readOnly: Boolean(this.ctx.grant?.readOnly),
      onSaved: async (saved, message) => {
        await this.load(true);
        this.openEditor(saved);
        this.notice.ok(message);
      },
      onDeleted: async (message) => {
        this.closeEditor();
        await this.load(true);
        this.notice.ok(message);
      },
      onClose: () => this.closeEditor(),
    });
    this.showInSlot(editor);
  }

  /** showInSlot puts the editor or the partition-delete panel beside or
   * below the list (style.css decides which) and brings it into view. */
  showInSlot(panel) {
    replace(this.editorSlot, panel.el);
    this.el.querySelector(".items-layout").classList.add("with-editor");
    panel.el.scrollIntoView({ block: "nearest" });
    panel.focus();
  }

  openPartitionDelete() {
    this.notice.clear();
    const panel = partitionDeletePanel({
      ctx: this.ctx,
      page: this.page,
      onDeleted: () => this.load(true),
      onClose: () => this.closeEditor(),
    });
    this.showInSlot(panel);
  }

  closeEditor() {
    this.editorSlot.replaceChildren();
    this.el.querySelector(".items-layout").classList.remove("with-editor");
  }
}
