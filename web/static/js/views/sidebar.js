// The sidebar: databases and their containers as a tree of links; with
// a resource token, the one container it grants.

import { h, replace } from "../dom.js";
import { routeHref } from "../router.js";

/**
 * Sidebar draws the tree into el. Databases expand on demand; the one
 * holding the current page is expanded. Redrawing keeps keyboard focus
 * on the link or button that had it. With a grant (a resource token's,
 * see grant.js) it shows the granted container alone and lists nothing:
 * a token may not list databases or containers.
 */
export class Sidebar {
  constructor(el, catalog, grant = null) {
    this.el = el;
    this.catalog = catalog;
    this.grant = grant;
    this.expanded = new Set();
    this.route = { page: "home" };
    this.error = "";
    catalog.addEventListener("change", () => this.draw());
  }

  /** select marks the current route and redraws. */
  select(route) {
    this.route = route;
    if (route.db) this.expanded.add(route.db);
    this.draw();
  }

  async draw() {
    if (this.grant) {
      this.drawGrant();
      return;
    }
    let databases;
    try {
      databases = await this.catalog.databases();
      await Promise.all([...this.expanded].filter((db) => databases.some((d) => d.id === db)).map((db) => this.catalog.containers(db)));
      this.error = "";
    } catch (e) {
      databases = [];
      this.error = e.message;
    }
    const focusKey = document.activeElement?.dataset?.key;
    replace(this.el, this.head(), this.error ? h("p", { class: "notice error", role: "alert" }, this.error) : null, this.tree(databases));
    if (focusKey) this.el.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  /** drawGrant shows the granted container, under its database's name. */
  drawGrant() {
    const { db, coll } = this.grant;
    const current = this.route.page === "container";
    const href = routeHref({ page: "container", db, coll, tab: "items" });
    replace(
      this.el,
      h("div", { class: "sidebar-head" }, h("h2", {}, "Granted")),
      h(
        "ul",
        { class: "tree", role: "list" },
        h(
          "li",
          {},
          h("span", { class: "tree-db" }, db),
          h("ul", { role: "list" }, h("li", {}, h("a", { href, class: "tree-leaf", "aria-current": current ? "page" : null }, coll))),
        ),
      ),
    );
  }

  head() {
    const refresh = h(
      "button",
      { type: "button", class: "button ghost small", "data-key": "refresh", "aria-label": "Refresh databases", title: "Refresh databases", onclick: () => this.catalog.invalidate() },
      h("span", { "aria-hidden": "true" }, "↻"),
    );
    return h("div", { class: "sidebar-head" }, h("h2", {}, h("a", { href: routeHref({ page: "home" }), "data-key": "home", "aria-current": this.route.page === "home" ? "page" : null }, "Databases")), refresh);
  }

  tree(databases) {
    if (!databases.length) {
      return h("p", { class: "muted sidebar-empty" }, this.error ? "" : "No databases yet.");
    }
    return h("ul", { class: "tree", role: "list" }, databases.map((d) => this.databaseNode(d.id)));
  }

  databaseNode(db) {
    const open = this.expanded.has(db);
    const current = this.route.db === db && this.route.page === "database";
    const toggle = h(
      "button",
      {
        type: "button",
        class: "twisty",
        "aria-expanded": String(open),
        "aria-label": `${open ? "Hide" : "Show"} containers of ${db}`,
        "data-key": `toggle:${db}`,
        onclick: () => this.toggle(db),
      },
      h("span", { "aria-hidden": "true" }, open ? "▾" : "▸"),
    );
    const link = h("a", { href: routeHref({ page: "database", db }), "data-key": `db:${db}`, "aria-current": current ? "page" : null }, db);
    const containers = open ? this.containerList(db) : null;
    return h("li", {}, h("div", { class: "tree-row" }, toggle, link), containers);
  }

  containerList(db) {
    const list = this.catalog.cachedContainers(db) ?? [];
    if (!list.length) return h("p", { class: "muted tree-empty" }, "No containers");
    return h(
      "ul",
      { role: "list" },
      list.map((c) => {
        const current = this.route.page === "container" && this.route.db === db && this.route.coll === c.id;
        const href = routeHref({ page: "container", db, coll: c.id, tab: "items" });
        return h("li", {}, h("a", { href, class: "tree-leaf", "data-key": `coll:${db}/${c.id}`, "aria-current": current ? "page" : null }, c.id));
      }),
    );
  }

  toggle(db) {
    if (this.expanded.has(db)) this.expanded.delete(db);
    else this.expanded.add(db);
    this.draw();
  }
}
