// The Connect page: endpoint, key (hidden until shown), connection
// string, certificate, and an SDK snippet for each language, all with
// this server's endpoint and the key the tab connected with.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { EMULATOR_KEY } from "../lib/ebb.js";
import { openExplorer } from "../lib/explorer.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

describe("Connect page", () => {
  let x;
  let page;
  let endpoint;
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  const snippet = (name) => page.getByLabel(`${name} snippet`, { exact: true });

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    x = await openExplorer();
    page = x.page;
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    endpoint = new URL("/", x.ebb.endpoint).href;
  });
  after(() => x?.close());

  it("is reached from the top bar's navigation", async () => {
    await page.getByRole("navigation", { name: "Explorer" }).getByRole("link", { name: "Connect" }).click();
    await page.getByRole("heading", { level: 1, name: "Connect" }).waitFor();
    assert.equal(await page.title(), "Connect · Ebb Explorer");
    assert.equal(await page.getByRole("navigation", { name: "Explorer" }).getByRole("link", { name: "Connect" }).getAttribute("aria-current"), "page");
  });

  it("shows the endpoint and keeps the key hidden until Show is pressed", async () => {
    const values = page.locator(".connect-values");
    assert.match(await values.innerText(), new RegExp(`Endpoint\\s+${endpoint.replace(/[.]/g, "\\.")}`));
    assert.equal((await page.locator("main").innerText()).includes(EMULATOR_KEY), false, "the key is nowhere on the page");
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, "connect-panel.png"), fullPage: true });

    await page.getByRole("button", { name: "Show key" }).click();
    const row = (label) => page.locator(".connect-row", { has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("code");
    assert.equal(await row("Key").innerText(), EMULATOR_KEY);
    assert.equal(await row("Connection string").innerText(), `AccountEndpoint=${endpoint};AccountKey=${EMULATOR_KEY};`);
    assert.equal(await page.getByRole("button", { name: "Hide key" }).getAttribute("aria-pressed"), "true");
    await page.getByRole("button", { name: "Hide key" }).click();
    assert.equal((await page.locator("main").innerText()).includes(EMULATOR_KEY), false, "hidden again");
  });

  it("copies the endpoint and the connection string with the real key", async () => {
    await page.getByRole("button", { name: "Copy endpoint" }).click();
    await page.getByRole("status").filter({ hasText: "Copied the endpoint." }).waitFor({ state: "attached" });
    assert.equal(await clipboard(), endpoint);
    await page.getByRole("button", { name: "Copy connection string" }).click();
    await page.getByRole("status").filter({ hasText: "Copied the connection string." }).waitFor({ state: "attached" });
    assert.equal(await clipboard(), `AccountEndpoint=${endpoint};AccountKey=${EMULATOR_KEY};`);
  });

  it("says there is no certificate on a server without TLS", async () => {
    // The test server speaks plain HTTP; over TLS the page links to /_explorer/emulator.pem.
    await page.getByText("This server speaks plain HTTP, so there is no certificate to trust.").waitFor();
    assert.equal(await page.getByRole("link", { name: /certificate/i }).count(), 0);
  });

  it("gives a snippet for each SDK with the endpoint and key", async () => {
    await page.getByRole("button", { name: "Show key" }).click();
    const key = JSON.stringify(EMULATOR_KEY);
    const url = JSON.stringify(endpoint);
    const want = {
      Go: [`azcosmos.NewKeyCredential(${key})`, `azcosmos.NewClientWithKey(${url}, cred, nil)`],
      JavaScript: ['import { CosmosClient } from "@azure/cosmos";', `new CosmosClient({ endpoint: ${url}, key: ${key} })`],
      Python: ["from azure.cosmos import CosmosClient", `CosmosClient(${url}, credential=${key})`],
      ".NET": [`new CosmosClient(\n    ${JSON.stringify(`AccountEndpoint=${endpoint};AccountKey=${EMULATOR_KEY};`)},`, "ConnectionMode.Gateway"],
      Java: ["new CosmosClientBuilder()", `.endpoint(${url})`, `.key(${key})`, ".buildClient();"],
    };
    for (const [name, parts] of Object.entries(want)) {
      const text = await snippet(name).innerText();
      for (const part of parts) assert.ok(text.includes(part), `${name} snippet lacks ${part}:\n${text}`);
    }
    await page.getByRole("button", { name: "Copy Python snippet" }).click();
    await page.getByRole("status").filter({ hasText: "Copied the Python snippet." }).waitFor({ state: "attached" });
    assert.equal(await clipboard(), await snippet("Python").innerText());
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, "connect-panel-shown.png"), fullPage: true });
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
