// A container page: its header (partition key, TTL, delete) and the tabs
// Items, Query, Scripts, Settings and Time to Live. Switching tabs keeps
// the header, so keyboard focus stays on the tab that was chosen.
//
// With a resource token (ctx.grant) the page offers what the token can
// do: the Items and Query tabs, no delete, and no link to the database,
// whose page lists containers. An item's token cannot read the
// container, so the page shows that one item instead.

import { Notice, confirmDialog, h, replace } from "../dom.js";
import { TOKEN_TABS } from "../grant.js";
import { routeHref } from "../router.js";
import { TTL_OFF, describeTtl, ttlSetting } from "../ttl.js";
import { renderGrantedItem } from "./granteditem.js";
import { renderItems } from "./items.js";
import { renderQuery } from "./query.js";
import { renderScripts } from "./scripts.js";
import { renderSettings } from "./settings.js";
import { renderTtlPanel } from "./ttlpanel.js";

const TAB_VIEWS = {
  items: { label: "Items", render: renderItems },
  query: { label: "Query", render: renderQuery },
  scripts: { label: "Scripts", render: renderScripts },
  settings: { label: "Settings", render: renderSettings },
  ttl: { label: "Time to Live", render: renderTtlPanel },
};

export class ContainerPage {
  constructor(ctx, db, coll) {
    this.ctx = ctx;
    this.db = db;
    this.coll = coll;
    this.container = null;
    this.notice = new Notice();
    this.facts = h("p", { class: "facts" });
    this.tabs = h("nav", { class: "tabs", "aria-label": "Container views" });
    this.panel = h("section", { class: "tab-panel", "aria-live": "off" });
    this.tab = null;
    this.tabAbort = null;
  }

  /** mount draws the page into el and reads the container. */
  async mount(el, tab) {
    const grant = this.ctx.grant;
    const del = grant ? null : h("button", { type: "button", class: "button danger", onclick: () => this.delete() }, "Delete container");
    const database = grant ? this.db : h("a", { href: routeHref({ page: "database", db: this.db }) }, this.db);
    const crumbs = h("p", { class: "eyebrow" }, database, " / container");
    replace(el, h("div", { class: "page-head" }, h("div", {}, crumbs, h("h1", { tabindex: "-1" }, this.coll), this.facts), del), this.notice.el, this.tabs, this.panel);
    if (grant?.item) {
      this.tabs.hidden = true;
      const panel = h("div", {});
      replace(this.panel, panel);
      renderGrantedItem(panel, this.ctx, this);
      return;
    }
    try {
      this.setContainer(await this.ctx.client.container(this.db, this.coll));
    } catch (e) {
      this.notice.error(e);
      return;
    }
    this.show(tab);
  }

  /** setContainer records a fresh read of the container (after a
   * settings change, say) and redraws what shows it. */
  setContainer(container) {
    this.container = container;
    const paths = container.partitionKey?.paths ?? [];
    replace(
      this.facts,
      h("span", { class: "fact" }, "Partition key ", h("code", {}, paths.join(", ") || "none")),
      h("span", { class: "badge", "data-ttl": ttlSetting(container.defaultTtl).mode === TTL_OFF ? "off" : "on" }, describeTtl(container.defaultTtl)),
    );
  }

  /** show switches to a tab (the container must have been read). */
  show(tab) {
    if (!this.container || tab === this.tab) return;
    this.tab = tab;
    this.drawTabs();
    this.tabAbort?.abort();
    this.tabAbort = new AbortController();
    const panel = h("div", {});
    replace(this.panel, panel);
    this.panel.setAttribute("aria-label", TAB_VIEWS[tab].label);
    TAB_VIEWS[tab].render(panel, { ...this.ctx, signal: this.tabAbort.signal }, this);
  }

  drawTabs() {
    const focused = document.activeElement?.dataset?.tab;
    const tabs = Object.entries(TAB_VIEWS).filter(([tab]) => !this.ctx.grant || TOKEN_TABS.includes(tab));
    replace(
      this.tabs,
      tabs.map(([tab, { label }]) =>
        h("a", { href: routeHref({ page: "container", db: this.db, coll: this.coll, tab }), class: "tab", "data-tab": tab, "aria-current": tab === this.tab ? "page" : null }, label),
      ),
    );
    if (focused) this.tabs.querySelector(`[data-tab="${focused}"]`)?.focus();
  }

  /** leave stops the current tab's listeners. */
  leave() {
    this.tabAbort?.abort();
  }

  async delete() {
    const ok = await confirmDialog(`Delete container "${this.coll}" and all its items? This cannot be undone.`, "Delete container");
    if (!ok) return;
    try {
      await this.ctx.client.deleteContainer(this.db, this.coll);
      this.ctx.catalog.invalidate(this.db);
      this.ctx.navigate({ page: "database", db: this.db });
    } catch (e) {
      this.notice.error(e);
    }
  }
}
