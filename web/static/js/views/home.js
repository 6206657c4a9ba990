// The home page: the account's databases and a form to create one.

import { Notice, busy, field, h, replace } from "../dom.js";
import { routeHref } from "../router.js";

export async function renderHome(el, ctx) {
  const notice = new Notice();
  const list = h("div", { class: "card-list" }, h("p", { class: "muted" }, "Loading…"));
  replace(
    el,
    h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Databases")),
    notice.el,
    h("section", { class: "card", "aria-labelledby": "db-list-title" }, h("h2", { id: "db-list-title" }, "All databases"), list),
    newDatabaseForm(ctx),
  );
  try {
    const databases = await ctx.catalog.databases();
    replace(list, databases.length ? databaseTable(databases) : h("p", { class: "muted" }, "There are no databases yet. Create one below."));
  } catch (e) {
    list.replaceChildren();
    notice.error(e);
  }
}

function databaseTable(databases) {
  return h(
    "ul",
    { class: "link-list", role: "list" },
    databases.map((d) => h("li", {}, h("a", { href: routeHref({ page: "database", db: d.id }) }, d.id))),
  );
}

function newDatabaseForm(ctx) {
  const notice = new Notice();
  const id = h("input", { name: "id", required: true, autocomplete: "off", spellcheck: "false", pattern: "[^\\/\\\\#?]+", title: 'An id cannot contain "/", "\\", "#" or "?".' });
  const throughput = h("input", { name: "throughput", type: "number", min: "1", step: "1", inputmode: "numeric", placeholder: "none" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "new-db-title" },
    h("h2", { id: "new-db-title" }, "New database"),
    h(
      "div",
      { class: "field-row" },
      field("Database id", id),
      field("Shared throughput (RU/s)", throughput, "Optional. Leave empty to give each container its own throughput."),
    ),
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Create database")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    await busy(form, async () => {
      try {
        const db = await ctx.client.createDatabase(id.value.trim(), throughput.value ? { manual: Number(throughput.value) } : null);
        ctx.catalog.invalidate();
        ctx.navigate({ page: "database", db: db.id });
      } catch (e) {
        notice.error(e);
      }
    });
  });
  return form;
}
