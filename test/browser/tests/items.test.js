// The Items tab: the new-item editor's validation, the list after the
// server clock moves, and the table's room beside an open item.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { routeHref } from "../../../web/static/js/router.js";
import { openExplorer, until } from "../lib/explorer.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "items";

describe("Items tab", () => {
  let x;
  let page;
  const rowIds = () => page.locator(".items-table tbody tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id).sort());
  const open = async (coll, tab = "items") => {
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll, tab }));
    await page.getByRole("heading", { level: 1, name: coll }).waitFor();
  };
  const createContainer = async (body) => {
    const res = await x.rest("POST", `/dbs/${DB}/colls`, { body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  };
  const createItem = async (coll, item, pk) => {
    const res = await x.rest("POST", `/dbs/${DB}/colls/${coll}/docs`, { body: item, headers: { "x-ms-documentdb-partitionkey": JSON.stringify(pk) } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    x = await openExplorer();
    page = x.page;
    assert.equal((await x.rest("POST", "/dbs", { body: { id: DB } })).status, 201);
  });
  after(() => x?.close());

  it("says an item needs an id only once the user has typed or tried to save", async () => {
    await createContainer({ id: "new-item", partitionKey: { paths: ["/pk"], kind: "Hash" } });
    await open("new-item");
    await page.getByRole("button", { name: "New item" }).click();
    const editor = page.getByRole("form", { name: "New item" });
    const json = editor.getByLabel("Item JSON");
    await json.waitFor();
    assert.doesNotMatch(await editor.innerText(), /needs an "id"/, "no complaint before anything was typed");
    assert.notEqual(await json.getAttribute("aria-invalid"), "true");

    // Trying to save the untouched template says what is missing.
    await editor.getByRole("button", { name: "Create item" }).click();
    await editor.getByText('The item needs an "id": a non-empty string.').waitFor();
    assert.equal(await json.getAttribute("aria-invalid"), "true");

    // So does typing; and a valid item says so.
    await editor.getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: "New item" }).click();
    await json.fill('{"id": "", "pk": "a"}');
    await editor.getByText('The item needs an "id": a non-empty string.').waitFor();
    await json.fill('{"id": "x", "pk": "a"}');
    await editor.getByText("Valid JSON.").waitFor();
    await editor.getByRole("button", { name: "Close" }).click();
  });

  it("reloads the list and the TTL panel when the clock is advanced from the page", async () => {
    await createContainer({ id: "expiring", partitionKey: { paths: ["/pk"], kind: "Hash" }, defaultTtl: 10 });
    await createItem("expiring", { id: "soon", pk: "a" }, ["a"]);
    await createItem("expiring", { id: "kept", pk: "a", ttl: -1 }, ["a"]);
    await open("expiring");
    await until("both items listed", async () => (await rowIds()).join() === "kept,soon");

    await page.getByLabel("Seconds to advance the server clock by").fill("11");
    await page.getByRole("button", { name: "Advance clock" }).click();
    await until("the expired item gone without a refresh", async () => (await rowIds()).join() === "kept");

    await open("expiring", "ttl");
    await page.locator(".tile").first().waitFor();
    const reloaded = page.waitForRequest((r) => new URL(r.url()).pathname === "/_ebb/containers/items/expiring/ttl");
    await page.getByRole("button", { name: "Advance clock" }).click();
    await reloaded;
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
