// End-to-end: the Ebb Explorer in a real (headless) Chromium against a
// real ebb process. It walks the issue's scenario: connect, create a
// database and a container, set Time to Live in the settings pane the
// way the portal does, watch items expire by advancing the server clock
// from the page, and run a query. What the page did is confirmed through
// the REST API itself (a signed fetch, the same API the SDKs use).
// Screenshots go to test/browser/artifacts/.
//
// The Time to Live settings and the item expiries it checks are the rows
// of the TTL contract's data file, testdata/ttl/matrix, which every suite
// runs: each defaultTtl the server accepts, set from the settings pane
// (or, for null, which the pane never sends, through the API) and shown
// by it; and each expiry row, an item whose expiry the items list shows
// and which disappears once the clock, moved from the page, passes it.
//
// Delete by partition key is driven from the Items tab: a confirmed
// delete takes one partition's items out of the list and leaves the
// other's, and the deletes in progress are shown (or that there are
// none: the server may already have finished, so no timing is assumed).

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { argValue, expiryRows, readMatrix } from "../../js/lib/ttldata.js";
import { errorText } from "../../../web/static/js/api.js";
import { routeHref } from "../../../web/static/js/router.js";
import { launchBrowser } from "../lib/browser.js";
import { EMULATOR_KEY, startEbb } from "../lib/ebb.js";
import { consumeLogged, until } from "../lib/explorer.js";
import { cosmosFetch } from "../lib/rest.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "shop";
const COLL = "carts";

const MATRIX = readMatrix();
/**
 * The defaultTtl values the server accepts, with the portal's name for
 * each ("Off", "On (no default)", "On 10 s"): null first (the pane never
 * sends it, so the API sets it), absent (Off) last, so that the pane
 * turns a TTL that is on off.
 */
const SETTINGS = MATRIX.filter((d) => d.cmd === "default-ttl" && !d.expected.startsWith("400")).sort(
  (a, b) => rank(argValue(a, "value")) - rank(argValue(b, "value")),
);
function rank(value) {
  return value === null ? 0 : value === undefined ? 2 : 1;
}
/** The container that TTL with indexing mode none refuses, and the message. */
const INDEXING_NONE = MATRIX.find((d) => d.cmd === "container" && d.args.get("indexing")?.[0] === "none");
/** The expiry rows, by container defaultTtl: one container each. */
const EXPIRY_GROUPS = new Map();
for (const row of expiryRows()) EXPIRY_GROUPS.set(row.defaultTtl, [...(EXPIRY_GROUPS.get(row.defaultTtl) ?? []), row]);
/** itemId names an expiry row's item after its ttl as the file writes it. */
const itemId = (row) => `ttl-${row.d.args.get("ttl")?.[0] ?? "absent"}`;

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
    await page.getByLabel("Time to Live in seconds").fill(String(argValue(INDEXING_NONE, "defaultTtl")));
    await page.getByLabel("Indexing policy (JSON)").fill('{"indexingMode": "none", "automatic": false}');
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const message = INDEXING_NONE.expected.replace(/^400 /, "");
    const alert = page.getByRole("alert").filter({ hasText: message.slice(0, 20) });
    assert.equal((await alert.innerText()).trim(), message);
    assert.equal("defaultTtl" in (await readContainer()), false, "nothing was saved");
    consumeLogged(browser.problems, 400, new RegExp(`/dbs/${DB}/colls/${COLL}$`));
    await page.getByRole("button", { name: "Discard changes" }).click();
  });

  for (const d of SETTINGS) {
    const value = argValue(d, "value");
    const seconds = /^On (\d+) s$/.exec(d.expected)?.[1];
    const radio = () => page.getByRole("radio", { name: seconds ? "On" : d.expected, exact: true });
    it(`Time to Live ${d.expected} (${d.line}): ${value === null ? "set through the API" : "set in the settings pane"}, shown by the page`, async () => {
      await tab("Settings").click();
      if (value === null) {
        const { _rid, _etag, _ts, _self, _docs, _sprocs, _triggers, _udfs, _conflicts, ...body } = await readContainer();
        const res = await rest("PUT", `/dbs/${DB}/colls/${COLL}`, { body: { ...body, defaultTtl: null } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        await page.reload();
        await tab("Settings").click();
      } else {
        await radio().check();
        if (seconds) await page.getByLabel("Time to Live in seconds").fill(seconds);
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await until(`defaultTtl ${value} on the server`, async () => (await readContainer()).defaultTtl === value);
      }
      // The server may show the change before the page has read its
      // answer and redrawn, so the page is waited for too.
      await until(`${d.expected} checked`, () => radio().isChecked());
      await until(`seconds ${seconds ?? "empty"}`, async () => (await page.getByLabel("Time to Live in seconds").inputValue()) === (seconds ?? ""));
      const badge = value === undefined || value === null ? /^TTL off$/ : value === -1 ? /^TTL on \(no default\)$/ : /^TTL \d/;
      await until(`badge for ${d.expected}`, async () => badge.test(await page.locator(".facts .badge").innerText()));
      const off = value === undefined || value === null;
      assert.equal(await page.locator(".facts .badge").getAttribute("data-ttl"), off ? "off" : "on", `badge state for ${d.expected}`);
      if (value === 10) await shot("settings");
    });
  }

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
  });

  let lastGroup;
  for (const [defaultTtl, rows] of EXPIRY_GROUPS) {
    const coll = `expiry-${defaultTtl ?? "off"}`;
    it(`defaultTtl ${defaultTtl ?? "absent"}: shows when each item expires, and a refresh after moving the clock from the page hides it`, async () => {
      const created = await rest("POST", `/dbs/${DB}/colls`, { body: { id: coll, partitionKey: { paths: ["/pk"], kind: "Hash" }, ...(defaultTtl === undefined ? {} : { defaultTtl }) } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll, tab: "items" }));
      await page.getByRole("heading", { level: 1, name: coll }).waitFor();
      for (const row of rows) {
        const ttl = row.d.args.get("ttl")?.[0];
        await page.getByRole("button", { name: "New item" }).click();
        await page.getByLabel("Item JSON").fill(`{"id": "${itemId(row)}", "pk": "p"${ttl === undefined ? "" : `, "ttl": ${ttl}`}}`);
        await page.getByRole("button", { name: "Create item" }).click();
        await status(`Created item ${itemId(row)}.`).waitFor();
      }
      await until("every row", async () => (await rowIds()).length === rows.length);
      const ts = (await rest("GET", `/dbs/${DB}/colls/${coll}/docs/${itemId(rows[0])}`, { headers: { "x-ms-documentdb-partitionkey": '["p"]' } })).body._ts;
      const expires = (id) => page.locator(`.items-table tr[data-id="${id}"] td.expires`).innerText();
      for (const row of rows) {
        const want = row.expiresAfter === null ? /^never / : new RegExp(`^${utc(ts + row.expiresAfter)} \\(in `);
        assert.match(await expires(itemId(row)), want, `${row.d.pos}: ${row.d.line}`);
      }
      if (defaultTtl === 10) {
        await page.getByRole("button", { name: itemId(rows[0]), exact: true }).click();
        await page.getByRole("form", { name: `Item ${itemId(rows[0])}` }).waitFor();
        await shot("items-editor");
      }
      await page.getByRole("button", { name: "Close" }).click();
      if (defaultTtl === 10) await shot("items");

      // Past each expiry in turn, and past every probe of the rows that never expire.
      const times = [...new Set(rows.flatMap((row) => (row.expiresAfter === null ? row.probes.map((p) => p.at) : [row.expiresAfter])))].sort((x, y) => x - y);
      for (const at of times) {
        const now = (await rest("GET", "/_ebb/clock")).body.epochSeconds;
        await page.getByLabel("Seconds to advance the server clock by").fill(String(ts + at - now));
        await page.getByRole("button", { name: "Advance clock" }).click();
        await page.locator(".clock-time", { hasText: utc(ts + at) }).waitFor();
        await page.getByRole("button", { name: "Refresh", exact: true }).click();
        const want = rows.filter((row) => row.expiresAfter === null || row.expiresAfter > at).map(itemId).sort();
        await until(`at _ts+${at}: ${want.join(" ")}`, async () => JSON.stringify((await rowIds()).sort()) === JSON.stringify(want));
      }
      if (defaultTtl === 10) await shot("items-after-clock");
      lastGroup = { coll, left: rows.filter((row) => row.expiresAfter === null).map(itemId).sort() };
    });
  }

  it("runs a query and shows results and the request charge", async () => {
    await tab("Query").click();
    await page.getByLabel("SQL query").fill("SELECT c.id FROM c ORDER BY c.id");
    await page.getByRole("button", { name: "Run query" }).click();
    const stats = page.locator(".query-results .stats");
    await stats.waitFor();
    const text = await stats.innerText();
    assert.match(text, new RegExp(`Results\\s+${lastGroup.left.length}\\b`, "i"));
    assert.match(text, /Request charge\s+\d+\.\d\d RU/i);
    const results = JSON.parse(await page.getByLabel("Query results as JSON").innerText());
    assert.deepEqual(results, lastGroup.left.map((id) => ({ id })));
    await page.getByText("Query metrics (last page)").click();
    await page.getByRole("row", { name: /Retrieved documents/ }).waitFor();
    await shot("query");
  });

  it("stays usable on a narrow window", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await tab("Items").click();
    await until("the rows that never expire", async () => (await rowIds()).includes(lastGroup.left[0]));
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

  /** createWithItems creates a container with a partition key definition
   * and items, and opens its Items tab once every item is listed. */
  const createWithItems = async (coll, partitionKey, items) => {
    const created = await rest("POST", `/dbs/${DB}/colls`, { body: { id: coll, partitionKey } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (const item of items) {
      const pk = partitionKey.paths.map((p) => item[p.slice(1)]);
      const res = await rest("POST", `/dbs/${DB}/colls/${coll}/docs`, { body: item, headers: { "x-ms-documentdb-partitionkey": JSON.stringify(pk) } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll, tab: "items" }));
    await page.getByRole("heading", { level: 1, name: coll }).waitFor();
    await until("every item", async () => (await rowIds()).length === items.length);
  };
  const pkDeleteForm = () => page.getByRole("form", { name: "Delete all items of a partition key" });
  const confirm = () => page.getByRole("dialog");
  const sortedRowIds = async () => JSON.stringify((await rowIds()).sort());

  /**
   * deletesInProgress waits for a "Deletes by partition key in progress"
   * card to load and returns "none" or its rows as [partition key,
   * requested, items left] texts.
   */
  const deletesInProgress = (region) =>
    until("the deletes in progress", async () => {
      const text = await region.innerText();
      if (text.includes("No deletes by partition key in progress.")) return "none";
      const rows = await region.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText.trim())));
      return rows.length ? rows : null;
    });
  const assertDeletesOf = (state, partitionKey, most) => {
    if (state === "none") return;
    assert.equal(state.length, 1, JSON.stringify(state));
    const [pk, requested, left] = state[0];
    assert.equal(pk, partitionKey);
    assert.match(requested, / UTC/);
    assert.ok(Number(left) <= most, `items left: ${left}`);
  };

  it("deletes all items of a partition key after a confirmation; the other partition's items stay", async () => {
    const coll = "pk-delete";
    await createWithItems(coll, { paths: ["/pk"], kind: "Hash" }, [
      { id: "a1", pk: "a" },
      { id: "a2", pk: "a" },
      { id: "b1", pk: "b" },
      { id: "b2", pk: "b" },
    ]);
    await page.getByRole("button", { name: "Delete all items of a partition key…" }).click();
    // A value that cannot be a partition key is refused before anything is sent.
    await pkDeleteForm().getByLabel("Value of /pk").fill("[1]");
    await pkDeleteForm().getByRole("button", { name: "Delete items…" }).click();
    assert.equal(await pkDeleteForm().getByRole("alert").innerText(), "/pk: A partition key value is a string, a number, true, false or null.");
    assert.equal(await pkDeleteForm().getByLabel("Value of /pk").getAttribute("aria-invalid"), "true");
    await pkDeleteForm().getByLabel("Value of /pk").fill("a");

    // Cancelling the confirmation deletes nothing.
    await pkDeleteForm().getByRole("button", { name: "Delete items…" }).click();
    assert.equal(await confirm().locator("[data-question]").innerText(), 'Delete every item with partition key "a" from container "pk-delete"? This cannot be undone.');
    await confirm().getByRole("button", { name: "Cancel" }).click();
    await confirm().waitFor({ state: "hidden" });
    assert.equal((await rest("GET", `/dbs/${DB}/colls/${coll}/docs/a1`, { headers: { "x-ms-documentdb-partitionkey": '["a"]' } })).status, 200);

    await pkDeleteForm().getByRole("button", { name: "Delete items…" }).click();
    await confirm().getByRole("button", { name: "Delete items" }).click();
    await status('Deleted the items of partition key "a"').waitFor();
    await until("only partition b listed", async () => (await sortedRowIds()) === '["b1","b2"]');
    for (const [id, pk, want] of [["a1", "a", 404], ["a2", "a", 404], ["b1", "b", 200]]) {
      const res = await rest("GET", `/dbs/${DB}/colls/${coll}/docs/${id}`, { headers: { "x-ms-documentdb-partitionkey": JSON.stringify([pk]) } });
      assert.equal(res.status, want, `read ${id} after the delete`);
    }

    // The deletes in progress, under the form and in the Time to Live tab.
    const beside = page.locator(".editor-slot").getByRole("region", { name: "Deletes by partition key in progress" });
    assertDeletesOf(await deletesInProgress(beside), '"a"', 2);
    await shot("pk-delete");
    await tab("Time to Live").click();
    const inTtlTab = page.getByRole("region", { name: "Deletes by partition key in progress" });
    assertDeletesOf(await deletesInProgress(inTtlTab), '"a"', 2);
    await inTtlTab.getByRole("button", { name: "Refresh deletes in progress" }).click();
    assertDeletesOf(await deletesInProgress(inTtlTab), '"a"', 2);
  });

  it("deletes by a hierarchical key given all its components, a number typed as one", async () => {
    const coll = "pk-delete-hierarchical";
    await createWithItems(coll, { paths: ["/tenant", "/level"], kind: "MultiHash", version: 2 }, [
      { id: "t-5", tenant: "t", level: 5 },
      { id: "t-5-text", tenant: "t", level: "5" },
      { id: "u-5", tenant: "u", level: 5 },
    ]);
    await page.getByRole("button", { name: "Delete all items of a partition key…" }).click();
    await pkDeleteForm().getByLabel("Value of /tenant").fill("t");
    await pkDeleteForm().getByLabel("Value of /level").fill("5");
    await pkDeleteForm().getByRole("button", { name: "Delete items…" }).click();
    await confirm().getByRole("button", { name: "Delete items" }).click();
    await status('Deleted the items of partition key "t", 5').waitFor();
    await until("t-5 gone, the rest listed", async () => (await sortedRowIds()) === '["t-5-text","u-5"]');
    assertDeletesOf(await deletesInProgress(page.getByRole("region", { name: "Deletes by partition key in progress" })), '"t", 5', 1);
  });

  it("shows the server's message when a delete by partition key fails", async () => {
    const coll = "pk-delete-hierarchical";
    await page.getByRole("button", { name: "Delete all items of a partition key…" }).click();
    await pkDeleteForm().getByLabel("Value of /tenant").fill("u");
    await pkDeleteForm().getByLabel("Value of /level").fill("5");
    assert.equal((await rest("DELETE", `/dbs/${DB}/colls/${coll}`)).status, 204);
    await pkDeleteForm().getByRole("button", { name: "Delete items…" }).click();
    await confirm().getByRole("button", { name: "Delete items" }).click();
    const alert = pkDeleteForm().getByRole("alert");
    await alert.waitFor();
    const direct = await rest("POST", `/dbs/${DB}/colls/${coll}/operations/partitionkeydelete`, { headers: { "x-ms-documentdb-partitionkey": '["u",5]' } });
    assert.equal(direct.status, 404);
    assert.equal((await alert.innerText()).trim(), errorText(direct.body.message));
    consumeLogged(browser.problems, 404, /\/operations\/partitionkeydelete$/);
  });

  it("logged no console errors", () => {
    assert.deepEqual(browser.problems, []);
  });
});
