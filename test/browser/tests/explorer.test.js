// End-to-end: the Ebb Explorer in a real (headless) Chromium against a
// real ebb process. It walks the scenario: connect, create a
// database and a container, set Time to Live in the settings pane the
// way the portal does, watch items expire by advancing the server clock
// from the page, switch TTL off again, and run a query. What the page
// did is confirmed through the REST API itself (a signed fetch, the same
// API the SDKs use). Screenshots go to test/browser/artifacts/.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { launchBrowser } from "../lib/browser.js";
import { EMULATOR_KEY, startEbb } from "../lib/ebb.js";
import { cosmosFetch } from "../lib/rest.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "shop";
const COLL = "carts";

/**
 * consumeLogged removes from problems the console errors a step caused on
 * purpose (Chromium logs every failed fetch, such as a 400 the page then
 * shows to the user) and asserts there was exactly one. Whatever is left
 * at the end fails the test.
 */
function consumeLogged(problems, status, urlPattern) {
  const prefix = `Failed to load resource: the server responded with a status of ${status}`;
  const matching = problems.filter((p) => p.text.startsWith(prefix) && urlPattern.test(p.url));
  assert.equal(matching.length, 1, `expected one logged ${status} for ${urlPattern}, got ${JSON.stringify(problems)}`);
  problems.splice(problems.indexOf(matching[0]), 1);
}

/** until polls check until it returns a truthy value (or fails after 10 s). */
async function until(what, check) {
  const deadline = Date.now() + 10_000;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/** utc formats epoch seconds as the page does. */
function utc(epochSeconds) {
  return `${new Date(epochSeconds * 1000).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

describe("Ebb Explorer", () => {
  let ebb;
  let browser;
  let page;
  const rest = (verb, path, options) => cosmosFetch(ebb.endpoint, EMULATOR_KEY, verb, path, options);
  const readContainer = async () => {
    const res = await rest("GET", `/dbs/${DB}/colls/${COLL}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const tab = (name) => page.getByRole("navigation", { name: "Container views" }).getByRole("link", { name, exact: true });
  const status = (text) => page.getByRole("status").filter({ hasText: text });
  const rowIds = () => page.locator(".items-table tbody tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id));
  const shot = async (name) => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    ebb = await startEbb();
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);
  });

  after(async () => {
    await browser?.close();
    await ebb?.stop();
  });

  it("refuses a wrong key with the server's message", async () => {
    await page.goto(new URL("_explorer/", ebb.endpoint).href);
    const key = page.getByLabel("Account key or connection string");
    assert.equal(await key.inputValue(), EMULATOR_KEY, "the emulator key is prefilled");
    await shot("connect");
    const wrong = Buffer.from("not the key of this server").toString("base64");
    await key.fill(`AccountEndpoint=${ebb.endpoint};AccountKey=${wrong};`);
    await key.press("Enter");
    const alert = page.getByRole("alert");
    assert.match(await alert.innerText(), /^The server refused this key: The input authorization token can't serve the request/);
    consumeLogged(browser.problems, 401, /\/$/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, "a refused key is not kept");
  });

  it("connects with the emulator key", async () => {
    const key = page.getByLabel("Account key or connection string");
    await key.fill(EMULATOR_KEY);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Databases" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("ebb-explorer-key")), EMULATOR_KEY);
    assert.equal(await page.evaluate(() => localStorage.length), 0, "nothing in localStorage");
  });

  it("creates a database (the form submits on Enter)", async () => {
    await page.getByLabel("Database id").fill(DB);
    await page.getByLabel("Database id").press("Enter");
    await page.getByRole("heading", { level: 1, name: DB }).waitFor();
    assert.equal((await rest("GET", `/dbs/${DB}`)).status, 200);
  });

  it("creates a container with a partition key and throughput", async () => {
    await shot("database");
    await page.getByLabel("Container id").fill(COLL);
    await page.getByLabel("Partition key").fill("/customer");
    await page.getByRole("button", { name: "Create container" }).click();
    await page.getByRole("heading", { level: 1, name: COLL }).waitFor();
    const c = await readContainer();
    assert.deepEqual(c.partitionKey.paths, ["/customer"]);
    assert.equal("defaultTtl" in c, false, "TTL starts off");
    await page.getByRole("navigation", { name: "Databases and containers" }).getByRole("link", { name: COLL }).waitFor();
  });

  it("shows the server's message when TTL meets indexing mode none", async () => {
    await tab("Settings").click();
    await page.getByRole("radio", { name: "On", exact: true }).check();
    await page.getByLabel("Time to Live in seconds").fill("10");
    await page.getByLabel("Indexing policy (JSON)").fill('{"indexingMode": "none", "automatic": false}');
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const alert = page.getByRole("alert").filter({ hasText: "Indexing mode" });
    assert.equal((await alert.innerText()).trim(), "Indexing mode value cannot be 'none' when 'defaultTtl' is specified in the collection");
    assert.equal("defaultTtl" in (await readContainer()), false, "nothing was saved");
    consumeLogged(browser.problems, 400, new RegExp(`/dbs/${DB}/colls/${COLL}$`));
    await page.getByRole("button", { name: "Discard changes" }).click();
  });

  it("switches TTL to On with 10 seconds in the settings pane", async () => {
    await page.getByRole("radio", { name: "On", exact: true }).check();
    await page.getByLabel("Time to Live in seconds").fill("10");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await status("Saved container settings.").waitFor();
    assert.equal((await readContainer()).defaultTtl, 10);
    await page.locator(".badge", { hasText: "TTL 10 s" }).waitFor();
    await shot("settings");
  });

  it("inserts two items and shows when each expires", async () => {
    await tab("Items").click();
    const items = [
      { id: "cart-1", customer: "ada" },
      { id: "cart-pinned", customer: "grace", ttl: -1 },
    ];
    for (const item of items) {
      await page.getByRole("button", { name: "New item" }).click();
      await page.getByLabel("Item JSON").fill(JSON.stringify(item, null, 2));
      await page.getByRole("button", { name: "Create item" }).click();
      await status(`Created item ${item.id}.`).waitFor();
    }
    await until("both rows", async () => (await rowIds()).length === 2);
    const read = await rest("GET", `/dbs/${DB}/colls/${COLL}/docs/cart-1`, { headers: { "x-ms-documentdb-partitionkey": '["ada"]' } });
    assert.equal(read.status, 200);
    const expires = (id) => page.locator(`.items-table tr[data-id="${id}"] td.expires`).innerText();
    assert.match(await expires("cart-1"), new RegExp(`^${utc(read.body._ts + 10)} \\(in 10 s\\)$`));
    assert.equal(await expires("cart-pinned"), "never (ttl -1)");
    await page.getByRole("button", { name: "cart-1" }).click();
    await page.getByRole("form", { name: "Item cart-1" }).waitFor();
    await shot("items-editor");
    await page.getByRole("button", { name: "Close" }).click();
    await shot("items");
  });

  it("shows the TTL panel: the server's statistics, or that it has none", async () => {
    await tab("Time to Live").click();
    const stats = await rest("GET", `/_ebb/containers/${DB}/${COLL}/ttl`);
    if (stats.status === 404) {
      await status("This server does not provide TTL statistics").waitFor();
      consumeLogged(browser.problems, 404, /\/_ebb\/containers\/[^/]+\/[^/]+\/ttl$/);
    } else {
      assert.equal(stats.status, 200);
      const tile = (label) => page.locator(".tile", { hasText: label }).locator("dd").first().innerText();
      await page.locator(".tile").first().waitFor();
      assert.equal(await tile("Backlog"), String(stats.body.backlog));
      if (stats.body.nextDeadlineEpoch) assert.match(await tile("Next deadline"), new RegExp(`^${utc(stats.body.nextDeadlineEpoch)}`));
      const minute = page.locator(".histogram-row", { hasText: "Next minute" }).locator(".count");
      assert.equal(await minute.innerText(), String(stats.body.upcoming.minute));
    }
    await shot("ttl-panel");
    await tab("Items").click();
    await until("both rows", async () => (await rowIds()).length === 2);
  });

  it("advances the server clock 11 s from the page; a refresh leaves only the pinned item", async () => {
    const before = (await rest("GET", "/_ebb/clock")).body.epochSeconds;
    await page.getByLabel("Seconds to advance the server clock by").fill("11");
    await page.getByRole("button", { name: "Advance clock" }).click();
    await page.locator(".clock-time", { hasText: utc(before + 11) }).waitFor();
    await page.locator('.items-table tr[data-id="cart-1"] .expired').first().waitFor();
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await until("only the pinned item", async () => JSON.stringify(await rowIds()) === '["cart-pinned"]');
    await shot("items-after-clock");
  });

  it("switches TTL Off: the container reads back without defaultTtl", async () => {
    await tab("Settings").click();
    await page.getByRole("radio", { name: "Off" }).check();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await status("Saved container settings.").waitFor();
    assert.equal("defaultTtl" in (await readContainer()), false);
    assert.equal(await page.getByRole("radio", { name: "Off" }).isChecked(), true);
    await page.locator(".badge", { hasText: "TTL off" }).waitFor();
  });

  it("runs a query and shows results and the request charge", async () => {
    await tab("Query").click();
    await page.getByLabel("SQL query").fill("SELECT c.id, c.customer FROM c");
    await page.getByRole("button", { name: "Run query" }).click();
    const stats = page.locator(".query-results .stats");
    await stats.waitFor();
    const text = await stats.innerText();
    assert.match(text, /Results\s+1\b/i);
    assert.match(text, /Request charge\s+\d+\.\d\d RU/i);
    const results = JSON.parse(await page.getByLabel("Query results as JSON").innerText());
    assert.deepEqual(results, [{ id: "cart-pinned", customer: "grace" }]);
    await page.getByText("Query metrics (last page)").click();
    await page.getByRole("row", { name: /Retrieved documents/ }).waitFor();
    await shot("query");
  });

  it("stays usable on a narrow window", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await tab("Items").click();
    await until("the pinned row", async () => (await rowIds()).includes("cart-pinned"));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await shot("items-narrow");
    await page.getByRole("button", { name: "Databases", exact: true }).click();
    await page.getByRole("navigation", { name: "Databases and containers" }).getByRole("link", { name: COLL }).waitFor();
    await shot("sidebar-narrow");
    await page.getByRole("button", { name: "Databases", exact: true }).click();
    await tab("Settings").click();
    await page.getByRole("radio", { name: "Off" }).waitFor();
    await shot("settings-narrow");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("logged no console errors", () => {
    assert.deepEqual(browser.problems, []);
  });
});
