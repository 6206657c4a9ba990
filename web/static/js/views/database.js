// A database page: its containers, a form to create one (throughput,
// Time to Live, vector embeddings and full-text paths), and delete.

import { Notice, busy, confirmDialog, field, h, replace } from "../dom.js";
import { describeOffer } from "../model.js";
import { routeHref } from "../router.js";
import { searchDefinition } from "../search.js";
import { describeTtl } from "../ttl.js";
import { fullTextPathsField } from "./fulltextfield.js";
import { throughputField } from "./throughputfield.js";
import { ttlField } from "./ttlfield.js";
import { vectorEmbeddingsField } from "./vectorfield.js";

export async function renderDatabase(el, ctx, db) {
  const notice = new Notice();
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const formSlot = h("div", {});
  const del = h("button", { type: "button", class: "button danger" }, "Delete database");
  del.addEventListener("click", () => deleteDatabase(ctx, db, notice));
  replace(
    el,
    h("div", { class: "page-head" }, h("div", {}, h("p", { class: "eyebrow" }, "Database"), h("h1", { tabindex: "-1" }, db)), del),
    notice.el,
    h("section", { class: "card", "aria-labelledby": "coll-list-title" }, h("h2", { id: "coll-list-title" }, "Containers"), list),
    formSlot,
  );
  // The form waits for the database's offer: whether a new container
  // can share the database's throughput depends on it.
  const drawForm = sharedThroughput(ctx, db).then(
    (shared) => replace(formSlot, newContainerForm(ctx, db, shared)),
    (e) => {
      notice.error(e);
      replace(formSlot, newContainerForm(ctx, db, null));
    },
  );
  try {
    const containers = await ctx.catalog.containers(db);
    replace(list, containers.length ? containerTable(db, containers) : h("p", { class: "muted" }, "This database has no containers yet. Create one below."));
  } catch (e) {
    list.replaceChildren();
    notice.error(e);
  }
  await drawForm;
}

/** sharedThroughput describes the database's own offer ("400 RU/s"),
 * or is null when the database has none. */
async function sharedThroughput(ctx, db) {
  const offer = await ctx.client.databaseOffer(db);
  return offer ? describeOffer(offer) : null;
}

function containerTable(db, containers) {
  const rows = containers.map((c) =>
    h(
      "tr",
      {},
      h("td", { "data-label": "Container" }, h("a", { href: routeHref({ page: "container", db, coll: c.id, tab: "items" }) }, c.id)),
      h("td", { "data-label": "Partition key", class: "mono" }, (c.partitionKey?.paths ?? []).join(", ")),
      h("td", { "data-label": "Time to Live" }, describeTtl(c.defaultTtl)),
    ),
  );
  return h(
    "table",
    { class: "table responsive" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Container"), h("th", { scope: "col" }, "Partition key"), h("th", { scope: "col" }, "Time to Live"))),
    h("tbody", {}, rows),
  );
}

async function deleteDatabase(ctx, db, notice) {
  const ok = await confirmDialog(`Delete database "${db}" with all its containers and items? This cannot be undone.`, "Delete database");
  if (!ok) return;
  try {
    await ctx.client.deleteDatabase(db);
    ctx.catalog.invalidate();
    ctx.navigate({ page: "home" });
  } catch (e) {
    notice.error(e);
  }
}

/** partitionKeyDefinition turns "/a" or "/a, /b" into the container's
 * partitionKey (several paths make a hierarchical key). */
function partitionKeyDefinition(text) {
  const paths = text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (!paths.length || paths.some((p) => !p.startsWith("/") || p.length < 2)) {
    throw new Error('A partition key path starts with "/", for example /category (separate up to three paths with commas).');
  }
  return { paths, kind: paths.length > 1 ? "MultiHash" : "Hash", version: 2 };
}

function newContainerForm(ctx, db, shared) {
  const notice = new Notice();
  const id = h("input", { name: "id", required: true, autocomplete: "off", spellcheck: "false", pattern: "[^\\/\\\\#?]+", title: 'An id cannot contain "/", "\\", "#" or "?".' });
  const pk = h("input", { name: "partitionKey", required: true, autocomplete: "off", spellcheck: "false", class: "mono", placeholder: "/category" });
  const throughput = throughputField(shared);
  const ttl = ttlField(undefined);
  const vectors = vectorEmbeddingsField();
  const fullText = fullTextPathsField([], {
    legend: "Full-text paths (optional)",
    hint: "Paths that hold text for FullTextContains and FullTextScore, such as /text, analyzed in English. Index adds the path to the indexing policy's fullTextIndexes.",
    indexes: true,
  });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "new-coll-title" },
    h("h2", { id: "new-coll-title" }, "New container"),
    h(
      "div",
      { class: "field-row" },
      field("Container id", id),
      field("Partition key", pk, "A path such as /category; several comma-separated paths make a hierarchical key."),
    ),
    throughput.el,
    ttl.el,
    vectors.el,
    fullText.el,
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Create container")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    let definition;
    let provisioned;
    try {
      provisioned = throughput.read();
      definition = { id: id.value.trim(), partitionKey: partitionKeyDefinition(pk.value) };
      const defaultTtl = ttl.read();
      if (defaultTtl !== undefined) definition.defaultTtl = defaultTtl;
      // The policies go as the user set them: the server checks them
      // (dimensions, index types, languages) and its 400 says what to fix.
      Object.assign(definition, searchDefinition({ embeddings: vectors.read(), fullTextPaths: fullText.read() }));
    } catch (e) {
      notice.error(e);
      return;
    }
    await busy(form, async () => {
      try {
        const created = await ctx.client.createContainer(db, definition, provisioned);
        ctx.catalog.invalidate(db);
        ctx.navigate({ page: "container", db, coll: created.id, tab: "items" });
      } catch (e) {
        notice.error(e);
      }
    });
  });
  return form;
}
