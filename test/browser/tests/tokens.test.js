// The Explorer connected with a resource token instead of a key: it
// shows what the token's permission grants and nothing else. With the
// master key (a signed fetch) the test creates a database, two
// containers, a user and permissions on the first container; the page
// then connects with each permission's token. An All token lists and
// creates items, a Read token lists them and offers no writes, and a
// token the server refuses (altered, or asked for more than it grants)
// shows the server's own message. No page asks for what a token cannot
// do: every request the page fails is one the test provokes and checks.
// Screenshots go to test/browser/artifacts/.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { errorText } from "../../../web/static/js/api.js";
import { launchBrowser } from "../lib/browser.js";
import { EMULATOR_KEY, startEbb } from "../lib/ebb.js";
import { consumeLogged, until } from "../lib/explorer.js";
import { cosmosFetch } from "../lib/rest.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "shop";
const GRANTED = "carts";
const OTHER = "orders";
const LINK = `dbs/${DB}/colls/${GRANTED}`;
const ITEMS = [
  { id: "c1", customer: "ada", total: 12 },
  { id: "c2", customer: "ada", total: 30 },
  { id: "c3", customer: "grace", total: 7 },
];
/** The service's answer to a request outside what a token grants. */
const FORBIDDEN = "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header.";

/** alter changes one character in the middle of a token's signature. */
function alter(token) {
  const at = token.indexOf("sig=") + Math.floor((token.length - token.indexOf("sig=")) / 2);
  return token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
}

describe("Explorer with a resource token", () => {
  let ebb;
  let browser;
  let page;
  /** The permissions by id, and their tokens. */
  const permissions = {};
  const tokens = {};
  const rest = (verb, path, options) => cosmosFetch(ebb.endpoint, EMULATOR_KEY, verb, path, options);
  const created = async (verb, path, options) => {
    const res = await rest(verb, path, options);
    assert.equal(res.status, 201, `${verb} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const tab = (name) => page.getByRole("navigation", { name: "Container views" }).getByRole("link", { name, exact: true });
  const status = (text) => page.getByRole("status").filter({ hasText: text });
  const rowIds = () => page.locator(".items-table tbody tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id).sort());
  const shot = async (name) => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };

  /** fillToken fills the connect form's resource token fields. */
  const fillToken = async (token, link, mode) => {
    await page.getByRole("radio", { name: "Resource token" }).check();
    await page.getByLabel("Token", { exact: true }).fill(token);
    await page.getByLabel("Resource link").fill(link);
    await page.getByRole("radio", { name: new RegExp(`^${mode}:`) }).check();
  };
  /** connectWith connects with a token and waits for the granted container. */
  const connectWith = async (token, link, mode, heading = GRANTED) => {
    await fillToken(token, link, mode);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: heading }).waitFor();
  };
  const disconnect = async () => {
    await page.getByRole("button", { name: "Disconnect" }).click();
    await page.getByRole("heading", { level: 1, name: "Connect to Ebb" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, "disconnecting forgets the token");
  };
  /** onlyGranted checks that the page names the other container nowhere. */
  const onlyGranted = async () => {
    const text = await page.locator("body").innerText();
    assert.ok(!text.includes(OTHER), `the page names ${OTHER}:\n${text}`);
  };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    ebb = await startEbb();
    browser = await launchBrowser();
    page = browser.page;
    page.setDefaultTimeout(10_000);

    await created("POST", "/dbs", { body: { id: DB } });
    for (const coll of [GRANTED, OTHER]) {
      await created("POST", `/dbs/${DB}/colls`, { body: { id: coll, partitionKey: { paths: ["/customer"], kind: "Hash" } } });
    }
    for (const item of ITEMS) {
      await created("POST", `/dbs/${DB}/colls/${GRANTED}/docs`, { body: item, headers: { "x-ms-documentdb-partitionkey": JSON.stringify([item.customer]) } });
    }
    await created("POST", `/dbs/${DB}/colls/${OTHER}/docs`, { body: { id: "o1", customer: "ada" }, headers: { "x-ms-documentdb-partitionkey": '["ada"]' } });
    await created("POST", `/dbs/${DB}/users`, { body: { id: "ada" } });
    for (const permission of [
      { id: "all", permissionMode: "All", resource: LINK },
      { id: "read", permissionMode: "Read", resource: LINK },
      { id: "ada-only", permissionMode: "All", resource: LINK, resourcePartitionKey: ["ada"] },
      { id: "one-item", permissionMode: "Read", resource: `${LINK}/docs/c2` },
    ]) {
      const p = await created("POST", `/dbs/${DB}/users/ada/permissions`, { body: permission });
      assert.match(p._token, /^type=resource&ver=1\.0&sig=/);
      permissions[permission.id] = p;
      tokens[permission.id] = p._token;
    }
  });

  after(async () => {
    await browser?.close();
    await ebb?.stop();
  });

  it("refuses a token with one character changed, with the server's 401 message", async () => {
    await page.goto(new URL("_explorer/", ebb.endpoint).href);
    await fillToken(alter(tokens.all), LINK, "All");
    await shot("token-connect");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const direct = await cosmosFetch(ebb.endpoint, EMULATOR_KEY, "GET", "/", { headers: { authorization: encodeURIComponent(alter(tokens.all)) } });
    assert.equal(direct.status, 401);
    assert.equal(await alert.innerText(), `The server refused this resource token for ${LINK}: ${errorText(direct.body.message)}`);
    consumeLogged(browser.problems, 401, /\/$/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, "a refused token is not kept");
  });

  it("checks the link's shape before asking the server", async () => {
    await page.getByLabel("Resource link").fill(`dbs/${DB}`);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "The resource link names a container" }).waitFor();
    assert.equal(await page.getByLabel("Resource link").getAttribute("aria-invalid"), "true");
  });

  it("connects with an All token and lists the granted container's items, and nothing else", async () => {
    await connectWith(tokens.all, `/${LINK}/`, "All");
    await until("the granted container's items", async () => JSON.stringify(await rowIds()) === JSON.stringify(ITEMS.map((i) => i.id)));
    assert.equal((await page.locator("#grant").innerText()).trim(), `Resource token (All) for ${LINK}`);
    const kept = await page.evaluate(() => ({ key: sessionStorage.getItem("ebb-explorer-key"), token: JSON.parse(sessionStorage.getItem("ebb-explorer-token")) }));
    assert.deepEqual(kept, { key: null, token: { kind: "resource-token", token: tokens.all, link: LINK, mode: "All" } });

    // Only what a token can use is offered.
    const tabs = await page.getByRole("navigation", { name: "Container views" }).getByRole("link").allInnerTexts();
    assert.deepEqual(tabs, ["Items", "Query"]);
    assert.equal(await page.getByRole("button", { name: "Delete container" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: /Delete all items of a partition key/ }).count(), 0);
    assert.equal(await page.locator("#clock").isVisible(), false, "no clock control: /_ebb needs a key");
    const sidebar = page.getByRole("navigation", { name: "Databases and containers" });
    assert.deepEqual(await sidebar.getByRole("link").allInnerTexts(), [GRANTED]);
    await onlyGranted();
    await shot("token-items");

    // Other pages lead back to the granted container.
    for (const hash of ["#/", `#/db/${DB}`, `#/db/${DB}/coll/${OTHER}/items`, `#/db/${DB}/coll/${GRANTED}/settings`]) {
      await page.evaluate((h) => (location.hash = h), hash);
      await until(`${hash} drawn as the granted container`, async () => (await page.evaluate(() => location.hash)) === `#/db/${DB}/coll/${GRANTED}/items`);
      await page.getByRole("heading", { level: 1, name: GRANTED }).waitFor();
      await onlyGranted();
    }
  });

  it("creates an item from the page with the All token", async () => {
    await page.getByRole("button", { name: "New item" }).click();
    await page.getByLabel("Item JSON").fill('{"id": "c4", "customer": "lin", "total": 3}');
    await page.getByRole("button", { name: "Create item" }).click();
    await status("Created item c4.").waitFor();
    await until("c4 listed", async () => (await rowIds()).includes("c4"));
    const res = await rest("GET", `/dbs/${DB}/colls/${GRANTED}/docs/c4`, { headers: { "x-ms-documentdb-partitionkey": '["lin"]' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 3);
    await shot("token-created");
  });

  it("runs a query with the token", async () => {
    await tab("Query").click();
    await page.getByLabel("SQL query").fill("SELECT VALUE c.id FROM c WHERE c.customer = 'ada' ORDER BY c.id");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.locator(".query-results .stats").waitFor();
    assert.deepEqual(JSON.parse(await page.getByLabel("Query results as JSON").innerText()), ["c1", "c2"]);
    await onlyGranted();
  });

  it("shows the token, not a key, on the Connect page", async () => {
    await page.getByRole("navigation", { name: "Explorer" }).getByRole("link", { name: "Connect" }).click();
    await page.getByRole("heading", { level: 1, name: "Connect" }).waitFor();
    const row = (label) => page.locator(".connect-row", { has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("code");
    assert.equal(await row("Resource link").innerText(), LINK);
    assert.equal((await page.locator("main").innerText()).includes(tokens.all), false, "the token is hidden");
    await page.getByRole("button", { name: "Show token" }).click();
    assert.equal(await row("Resource token").innerText(), tokens.all);
    assert.equal(await page.getByText(EMULATOR_KEY).count(), 0);
    await shot("token-connect-panel");
  });

  it("keeps the token across a reload", async () => {
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Connect" }).waitFor();
    assert.equal((await page.locator("#grant").innerText()).trim(), `Resource token (All) for ${LINK}`);
    await page.getByRole("navigation", { name: "Databases and containers" }).getByRole("link", { name: GRANTED }).click();
    await until("the items", async () => (await rowIds()).includes("c4"));
  });

  it("after Disconnect, connects with a Read token pasted as the whole permission: items listed, no writes offered", async () => {
    await disconnect();
    await page.getByRole("radio", { name: "Resource token" }).check();
    await page.getByRole("radio", { name: /^All:/ }).check();
    await page.getByLabel("Token", { exact: true }).fill(JSON.stringify(permissions.read, null, 2));
    assert.equal(await page.getByLabel("Token", { exact: true }).inputValue(), tokens.read);
    assert.equal(await page.getByLabel("Resource link").inputValue(), LINK);
    assert.equal(await page.getByRole("radio", { name: /^Read:/ }).isChecked(), true, "the permission's mode is chosen");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: GRANTED }).waitFor();
    await until("the items", async () => (await rowIds()).length === ITEMS.length + 1);
    assert.equal((await page.locator("#grant").innerText()).trim(), `Resource token (Read) for ${LINK}`);
    assert.equal(await page.getByRole("button", { name: "New item" }).count(), 0);
    await page.getByRole("button", { name: "c1", exact: true }).click();
    const editor = page.getByRole("form", { name: "Item c1" });
    await editor.waitFor();
    assert.equal(JSON.parse(await editor.getByLabel("Item JSON").inputValue()).total, 12);
    assert.equal(await editor.getByLabel("Item JSON").getAttribute("readonly"), "");
    assert.deepEqual(await editor.getByRole("button").allInnerTexts(), ["Close"]);
    await onlyGranted();
    await shot("token-read");
  });

  it("shows the server's message when a Read token is used to write", async () => {
    await disconnect();
    // The page takes the user's word for the mode; the server has the last one.
    await connectWith(tokens.read, LINK, "All");
    await page.getByRole("button", { name: "New item" }).click();
    await page.getByLabel("Item JSON").fill('{"id": "c5", "customer": "ada"}');
    await page.getByRole("button", { name: "Create item" }).click();
    const alert = page.getByRole("form", { name: "New item" }).getByRole("alert");
    assert.equal((await alert.innerText()).trim(), FORBIDDEN);
    consumeLogged(browser.problems, 403, /\/docs$/);
    assert.equal((await rest("GET", `/dbs/${DB}/colls/${GRANTED}/docs/c5`, { headers: { "x-ms-documentdb-partitionkey": '["ada"]' } })).status, 404);
  });

  it("shows the server's message when a token for one partition key lists the container", async () => {
    await disconnect();
    await connectWith(tokens["ada-only"], LINK, "All");
    await page.getByRole("alert").filter({ hasText: FORBIDDEN }).waitFor();
    consumeLogged(browser.problems, 403, /\/docs$/);
    await shot("token-partition");
  });

  it("reads the one item an item's token grants, given its partition key", async () => {
    await disconnect();
    await connectWith(tokens["one-item"], `${LINK}/docs/c2`, "Read");
    await page.getByLabel("Partition key value").fill("ada");
    await page.getByRole("button", { name: "Read item" }).click();
    const editor = page.getByRole("form", { name: "Item c2" });
    await editor.waitFor();
    assert.equal(JSON.parse(await editor.getByLabel("Item JSON").inputValue()).total, 30);
    await onlyGranted();
    await shot("token-item");
  });

  it("says so when the saved token's permission is deleted", async () => {
    assert.equal((await rest("DELETE", `/dbs/${DB}/users/ada/permissions/one-item`)).status, 204);
    await page.reload();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), new RegExp(`^The saved resource token no longer works: The server refused this resource token for ${LINK}/docs/c2: The resource token is no longer valid`));
    consumeLogged(browser.problems, 401, /\/$/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, "a refused token is forgotten");
  });

  it("logged no console errors", () => {
    assert.deepEqual(browser.problems, []);
  });
});
