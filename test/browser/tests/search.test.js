// Vector and full-text search in the Explorer: a container created from
// the database page's form with a vector embedding (flat index) and an
// indexed full-text path, sent as the service takes them and confirmed
// through the REST API; a policy the server refuses, with its message
// shown; vector, full-text and hybrid queries from the Query tab shown
// with each row's rank; and the Settings tab, where the vector policy is
// read only and the full-text paths are edited.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { errorText } from "../../../web/static/js/api.js";
import { routeHref } from "../../../web/static/js/router.js";
import { consumeLogged, openExplorer, until } from "../lib/explorer.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "lab";
const COLL = "notes";

const VECTOR_POLICY = { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 3 }] };
const FULL_TEXT_POLICY = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] };
const ITEMS = [
  { id: "a", pk: "p", v: [1, 0, 0], text: "the quick brown fox" },
  { id: "b", pk: "p", v: [0.9, 0.1, 0], text: "a lazy dog sleeps" },
  { id: "c", pk: "q", v: [0, 1, 0], text: "fox and fox and dog" },
  { id: "d", pk: "q", v: [0, 0, 1], text: "nothing here" },
];
const VECTOR_QUERY = "SELECT TOP 2 c.id, VectorDistance(c.v, [1,0,0]) AS score FROM c ORDER BY VectorDistance(c.v, [1,0,0])";

describe("Vector and full-text search", () => {
  let x;
  let page;
  const form = () => page.getByRole("form", { name: "New container" });
  const tab = (name) => page.getByRole("navigation", { name: "Container views" }).getByRole("link", { name, exact: true });
  const shot = async (name) => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };
  const openDatabase = async () => {
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "database", db: DB }));
    await page.getByRole("heading", { level: 1, name: DB }).waitFor();
    await form().getByRole("button", { name: "Create container" }).waitFor();
  };
  const readContainer = async (coll) => {
    const res = await x.rest("GET", `/dbs/${DB}/colls/${coll}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  /** restQuery runs a query through the API, on the container's one
   * partition key range as the page does. */
  const restQuery = async (sql) => {
    const ranges = await x.rest("GET", `/dbs/${DB}/colls/${COLL}/pkranges`);
    const res = await x.rest("POST", `/dbs/${DB}/colls/${COLL}/docs`, {
      body: { query: sql },
      headers: {
        "content-type": "application/query+json",
        "x-ms-documentdb-isquery": "true",
        "x-ms-documentdb-query-enablecrosspartition": "true",
        "x-ms-documentdb-partitionkeyrangeid": ranges.body.PartitionKeyRanges[0].id,
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.Documents;
  };
  /** runQuery runs sql from the Query tab and returns the results the
   * page shows as JSON, once it has drawn them. */
  const runQuery = async (sql) => {
    await page.getByLabel("SQL query").fill(sql);
    const answered = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === `/dbs/${DB}/colls/${COLL}/docs` && r.request().postDataJSON()?.query === sql);
    await page.getByRole("button", { name: "Run query" }).click();
    assert.equal((await answered).status(), 200);
    await page.locator("form.query-form:not([aria-busy])").waitFor();
    return JSON.parse(await page.getByLabel("Query results as JSON").innerText());
  };
  const rankedTable = () => page.getByRole("table", { name: /^Ranked results/ });
  /** rankedRows reads the ranked table: its header and its rows, as the
   * texts of their cells. */
  const rankedRows = async () => {
    const table = rankedTable();
    const cells = (selector) => table.locator(selector).evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.innerText.trim())));
    return { head: (await cells("thead tr"))[0], rows: await cells("tbody tr") };
  };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    x = await openExplorer();
    page = x.page;
    assert.equal((await x.rest("POST", "/dbs", { body: { id: DB } })).status, 201);
  });
  after(() => x?.close());

  it("creates a container with a vector embedding and an indexed full-text path from the form", async () => {
    await openDatabase();
    await form().getByLabel("Container id").fill(COLL);
    await form().getByLabel("Partition key").fill("/pk");
    await form().getByRole("button", { name: "Add vector embedding" }).click();
    const vector = form().getByRole("group", { name: "Vector embedding 1" });
    assert.equal(await vector.getByLabel("Path", { exact: true }).evaluate((el) => el === document.activeElement), true, "a new row's path has focus");
    await vector.getByLabel("Path", { exact: true }).fill("/v");
    await vector.getByLabel("Data type").selectOption("float32");
    await vector.getByLabel("Distance function").selectOption("cosine");
    await vector.getByLabel("Dimensions").fill("3");
    await vector.getByLabel("Vector index").selectOption("flat");
    await form().getByRole("button", { name: "Add full-text path" }).click();
    const text = form().getByRole("group", { name: "Full-text path 1" });
    await text.getByLabel("Path", { exact: true }).fill("/text");
    assert.match(await text.innerText(), /Language\s+en-US/);
    await text.getByLabel("Index").check();
    await form().screenshot({ path: join(ARTIFACTS, "new-container-search.png") });

    const request = page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === `/dbs/${DB}/colls`);
    await form().getByRole("button", { name: "Create container" }).click();
    assert.deepEqual((await request).postDataJSON(), {
      id: COLL,
      partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 },
      vectorEmbeddingPolicy: VECTOR_POLICY,
      fullTextPolicy: FULL_TEXT_POLICY,
      indexingPolicy: { vectorIndexes: [{ path: "/v", type: "flat" }], fullTextIndexes: [{ path: "/text" }] },
    });
    await page.getByRole("heading", { level: 1, name: COLL }).waitFor();

    const c = await readContainer(COLL);
    assert.deepEqual(c.vectorEmbeddingPolicy, VECTOR_POLICY);
    assert.deepEqual(c.fullTextPolicy, FULL_TEXT_POLICY);
    assert.deepEqual(c.indexingPolicy.vectorIndexes, [{ path: "/v", type: "flat" }]);
    assert.deepEqual(c.indexingPolicy.fullTextIndexes, [{ path: "/text" }]);
  });

  it("shows the server's message for a policy it refuses, and creates nothing", async () => {
    await openDatabase();
    await form().getByLabel("Container id").fill("refused");
    await form().getByLabel("Partition key").fill("/pk");
    // Two rows, the first removed: the other becomes row 1, and focus
    // stays in the list.
    await form().getByRole("button", { name: "Add vector embedding" }).click();
    await form().getByRole("button", { name: "Add vector embedding" }).click();
    await form().getByRole("group", { name: "Vector embedding 2" }).getByLabel("Path", { exact: true }).fill("/v");
    await form().getByRole("button", { name: "Remove vector embedding 1" }).click();
    assert.equal(await form().getByRole("group", { name: /^Vector embedding \d/ }).count(), 1);
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "Add vector embedding");
    const vector = form().getByRole("group", { name: "Vector embedding 1" });
    assert.equal(await vector.getByLabel("Path", { exact: true }).inputValue(), "/v");
    await vector.getByLabel("Dimensions").fill("0");
    await form().getByRole("button", { name: "Create container" }).click();

    const alert = form().getByRole("alert");
    await alert.waitFor();
    const direct = await x.rest("POST", `/dbs/${DB}/colls`, {
      body: { id: "refused", partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 }, vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 0 }] } },
    });
    assert.equal(direct.status, 400);
    assert.equal((await alert.innerText()).trim(), errorText(direct.body.message));
    assert.match(await alert.innerText(), /dimensions/);
    consumeLogged(x.browser.problems, 400, new RegExp(`/dbs/${DB}/colls$`));
    assert.equal((await x.rest("GET", `/dbs/${DB}/colls/refused`)).status, 404);
    await form().screenshot({ path: join(ARTIFACTS, "new-container-search-refused.png") });
  });

  it("runs a vector search from the Query tab and shows each row's rank", async () => {
    for (const item of ITEMS) {
      const res = await x.rest("POST", `/dbs/${DB}/colls/${COLL}/docs`, { body: item, headers: { "x-ms-documentdb-partitionkey": JSON.stringify([item.pk]) } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll: COLL, tab: "query" }));
    await page.getByLabel("SQL query").waitFor();
    const want = await restQuery(VECTOR_QUERY);
    assert.deepEqual(want.map((d) => d.id), ["a", "b"], "most similar first");
    assert.deepEqual(await runQuery(VECTOR_QUERY), want);
    assert.deepEqual(await rankedRows(), {
      head: ["Rank", "id", "score"],
      rows: want.map((d, i) => [String(i + 1), d.id, String(d.score)]),
    });
    await shot("query-vector");
  });

  it("offers examples over the container's paths and ranks a full-text search", async () => {
    const examples = page.locator("details.examples");
    await examples.getByText("Examples", { exact: true }).click();
    const buttons = examples.getByRole("button");
    assert.deepEqual(await buttons.allInnerTexts(), ["Vector search", "Full-text ranking", "Hybrid (RRF)"]);
    await examples.getByRole("button", { name: "Full-text ranking" }).click();
    const example = await page.getByLabel("SQL query").inputValue();
    assert.equal(example, "SELECT TOP 10 c.id, c.text\nFROM c\nORDER BY RANK FullTextScore(c.text, 'search')");
    assert.equal(await page.getByLabel("SQL query").evaluate((el) => el === document.activeElement), true, "the editor has focus");

    const sql = example.replace("'search'", "'fox'");
    const want = await restQuery(sql);
    assert.deepEqual(want.slice(0, 2).map((d) => d.id), ["c", "a"], "the text with fox twice first");
    assert.deepEqual(await runQuery(sql), want);
    const ranked = await rankedRows();
    assert.deepEqual(ranked.head, ["Rank", "id", "text"]);
    assert.deepEqual(ranked.rows, want.map((d, i) => [String(i + 1), d.id, d.text]));
    await shot("query-fulltext");

    await examples.getByRole("button", { name: "Hybrid (RRF)" }).click();
    const hybrid = (await page.getByLabel("SQL query").inputValue()).replace("'search'", "'fox'");
    const fused = await restQuery(hybrid);
    assert.deepEqual(await runQuery(hybrid), fused);
    assert.deepEqual((await rankedRows()).rows.map((r) => r[0]), fused.map((_, i) => String(i + 1)));
  });

  it("shows no rank for a query that does not rank", async () => {
    assert.deepEqual(await runQuery("SELECT c.id FROM c WHERE c.id = 'a'"), [{ id: "a" }]);
    assert.equal(await rankedTable().count(), 0);
  });

  it("shows the vector policy read only in Settings and saves edited full-text paths", async () => {
    await tab("Settings").click();
    const vectors = page.getByRole("group", { name: "Vector embeddings" });
    await vectors.waitFor();
    assert.match(await vectors.innerText(), /cannot be changed after it is created/);
    const rows = await vectors.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText.trim())));
    assert.deepEqual(rows, [["/v", "float32", "cosine", "3", "flat"]]);
    assert.equal(await vectors.locator("input, select, textarea, button").count(), 0, "nothing to edit");

    const fullText = page.getByRole("group", { name: "Full-text paths" });
    assert.equal(await fullText.getByRole("group", { name: "Full-text path 1" }).getByLabel("Path", { exact: true }).inputValue(), "/text");
    await fullText.getByRole("button", { name: "Add full-text path" }).click();
    await fullText.getByRole("group", { name: "Full-text path 2" }).getByLabel("Path", { exact: true }).fill("/title");
    await shot("settings-search");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Saved container settings." }).waitFor();
    const c = await readContainer(COLL);
    assert.deepEqual(c.fullTextPolicy, { defaultLanguage: "en-US", fullTextPaths: [...FULL_TEXT_POLICY.fullTextPaths, { path: "/title", language: "en-US" }] });
    assert.deepEqual(c.vectorEmbeddingPolicy, VECTOR_POLICY, "sent back as read");
    assert.deepEqual(c.indexingPolicy.fullTextIndexes, [{ path: "/text" }]);

    // The indexed path cannot leave the policy: the server says so.
    await fullText.getByRole("button", { name: "Remove full-text path 1" }).click();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /The full-text index path '\/text' is not in the container's fullTextPolicy/);
    consumeLogged(x.browser.problems, 400, new RegExp(`/dbs/${DB}/colls/${COLL}$`));
    await page.getByRole("button", { name: "Discard changes" }).click();
    assert.deepEqual(await fullText.locator(".policy-path").evaluateAll((inputs) => inputs.map((i) => i.value)), ["/text", "/title"]);
  });

  it("keeps the new container form within a narrow window", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openDatabase();
    await form().getByRole("button", { name: "Add vector embedding" }).click();
    await form().getByRole("button", { name: "Add full-text path" }).click();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await form().screenshot({ path: join(ARTIFACTS, "new-container-search-narrow.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
