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

  // Item ids are often GUIDs, and keys hierarchical: an open item must
  // leave the table room enough to show each id on one line, beside the
  // editor (44rem at least) or above it.
  for (const [width, height, beside] of [
    [1600, 900, true],
    [1280, 800, false],
    [800, 600, false],
  ]) {
    it(`keeps the item table usable with an item open at ${width}x${height}`, async () => {
      const coll = `wide-${width}`;
      await page.setViewportSize({ width, height });
      await createContainer({ id: coll, partitionKey: { paths: ["/tenant", "/region"], kind: "MultiHash", version: 2 }, defaultTtl: 3600 });
      const ids = ["3f2504e0-4f89-41d3-9a0c-0305e82c3301", "9b2f6c1e-8d4a-4e8b-b6f1-2c7d1e0a5f93", "c5d1a7e2-0b3f-4c6d-8e9a-1f2b3c4d5e6f"];
      for (const id of ids) await createItem(coll, { id, tenant: "contoso-retail", region: "westeurope", ttl: 600 }, ["contoso-retail", "westeurope"]);
      await open(coll);
      await until("every item", async () => (await rowIds()).length === ids.length);

      await page.getByRole("button", { name: ids[0], exact: true }).click();
      const editor = page.getByRole("form", { name: `Item ${ids[0]}` });
      await editor.waitFor();
      assert.ok(await editor.evaluate((el) => el.contains(document.activeElement)), "the editor has the focus");
      const inView = await editor.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top < innerHeight && r.bottom > 0;
      });
      assert.ok(inView, "the editor is scrolled into view");
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(ARTIFACTS, `items-editor-${width}x${height}.png`), fullPage: true });

      // The lines each id takes in its cell.
      const idLines = await page.locator(".items-table tbody tr[data-id] td:first-child button").evaluateAll((buttons) =>
        buttons.map((b) => {
          const range = document.createRange();
          range.selectNodeContents(b);
          return range.getClientRects().length;
        }),
      );
      assert.deepEqual(idLines, ids.map(() => 1), "each id on one line");
      const wrap = await page.locator(".items-list .table-wrap").boundingBox();
      const form = await editor.boundingBox();
      assert.equal(form.y >= wrap.y + wrap.height, !beside, beside ? "the editor beside the table" : "the editor below the table");
      if (beside) assert.ok(wrap.width >= 44 * 15, `the table is ${wrap.width}px wide beside the editor`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
      await editor.getByRole("button", { name: "Close" }).click();
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  }

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
