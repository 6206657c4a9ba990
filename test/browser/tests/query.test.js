// The Query tab: a failed query shows its error and nothing else.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { routeHref } from "../../../web/static/js/router.js";
import { consumeLogged, openExplorer } from "../lib/explorer.js";

const DB = "q";
const COLL = "things";

describe("Query tab", () => {
  let x;
  before(async () => {
    x = await openExplorer();
    assert.equal((await x.rest("POST", "/dbs", { body: { id: DB } })).status, 201);
    assert.equal((await x.rest("POST", `/dbs/${DB}/colls`, { body: { id: COLL, partitionKey: { paths: ["/pk"], kind: "Hash" } } })).status, 201);
    const res = await x.rest("POST", `/dbs/${DB}/colls/${COLL}/docs`, { body: { id: "one", pk: "a" }, headers: { "x-ms-documentdb-partitionkey": '["a"]' } });
    assert.equal(res.status, 201);
  });
  after(() => x?.close());

  it("clears the previous results when a query fails", async () => {
    const { page } = x;
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll: COLL, tab: "query" }));
    await page.getByLabel("SQL query").fill("SELECT c.id FROM c");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.getByLabel("Query results as JSON").waitFor();
    assert.deepEqual(JSON.parse(await page.getByLabel("Query results as JSON").innerText()), [{ id: "one" }]);

    await page.getByLabel("SQL query").fill("SELECT FROM WHERE");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.getByRole("alert").waitFor();
    consumeLogged(x.browser.problems, 400, /\/docs$/);
    assert.equal(await page.locator(".query-results").innerText(), "", "no results under the error");
    assert.equal(await page.getByLabel("Query results as JSON").count(), 0);
    assert.equal(await page.getByRole("status").filter({ hasText: "Request charge" }).count(), 0);
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
