// Creating a container from a database page: throughput Manual or
// Autoscale, sent with the headers the service takes, and the database's
// shared throughput offered only where the database has some.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { routeHref } from "../../../web/static/js/router.js";
import { openExplorer } from "../lib/explorer.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

describe("New container", () => {
  let x;
  let page;
  const form = () => page.getByRole("form", { name: "New container" });
  const openDatabase = async (db) => {
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "database", db }));
    await page.getByRole("heading", { level: 1, name: db }).waitFor();
    await form().getByRole("button", { name: "Create container" }).waitFor();
  };
  /** offerOf returns the offer of the container or database with this _rid, or null. */
  const offerOf = async (rid) => {
    const res = await x.rest("GET", "/offers");
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.Offers.find((o) => o.offerResourceId === rid) ?? null;
  };
  const readContainer = async (db, coll) => {
    const res = await x.rest("GET", `/dbs/${db}/colls/${coll}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  /** create fills the form, submits it, and returns the throughput headers
   * the page sent. */
  const create = async (db, id, fill) => {
    await form().getByLabel("Container id").fill(id);
    await form().getByLabel("Partition key").fill("/pk");
    await fill();
    const request = page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === `/dbs/${db}/colls`);
    await form().getByRole("button", { name: "Create container" }).click();
    const headers = (await request).headers();
    await page.getByRole("heading", { level: 1, name: id }).waitFor();
    return { manual: headers["x-ms-offer-throughput"], autoscale: headers["x-ms-cosmos-offer-autopilot-settings"] };
  };

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    x = await openExplorer();
    page = x.page;
    assert.equal((await x.rest("POST", "/dbs", { body: { id: "dedicated" } })).status, 201);
    assert.equal((await x.rest("POST", "/dbs", { body: { id: "shared" }, headers: { "x-ms-offer-throughput": "600" } })).status, 201);
  });
  after(() => x?.close());

  it("does not mention shared throughput on a database that has none", async () => {
    await openDatabase("dedicated");
    assert.doesNotMatch(await form().innerText(), /shared|database's/i);
    assert.equal(await form().getByRole("radio", { name: /shared/i }).count(), 0);
    assert.equal(await form().getByRole("radio", { name: "Manual", exact: true }).isChecked(), true);
  });

  it("creates a container with autoscale throughput", async () => {
    const sent = await create("dedicated", "auto", async () => {
      await form().getByRole("radio", { name: "Autoscale", exact: true }).check();
      await form().getByLabel("Maximum throughput (RU/s)").fill("4000");
    });
    assert.deepEqual(sent, { manual: undefined, autoscale: '{"maxThroughput":4000}' });
    const offer = await offerOf((await readContainer("dedicated", "auto"))._rid);
    assert.equal(offer.content.offerAutopilotSettings.maxThroughput, 4000);
  });

  it("creates a container with manual throughput", async () => {
    await openDatabase("dedicated");
    const sent = await create("dedicated", "manual", async () => {
      await form().getByLabel("Throughput (RU/s)").fill("500");
    });
    assert.deepEqual(sent, { manual: "500", autoscale: undefined });
    const offer = await offerOf((await readContainer("dedicated", "manual"))._rid);
    assert.equal(offer.content.offerThroughput, 500);
    assert.equal(offer.content.offerAutopilotSettings, undefined);
  });

  // The number's own min and step stop the form (the browser says why),
  // so what the service would refuse is never sent.
  it("refuses throughput the service refuses before sending anything", async () => {
    await openDatabase("dedicated");
    let posted = 0;
    const count = (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/dbs/dedicated/colls") posted += 1;
    };
    page.on("request", count);
    await form().getByLabel("Container id").fill("refused");
    await form().getByLabel("Partition key").fill("/pk");
    for (const [mode, label, value, flaw] of [
      ["Manual", "Throughput (RU/s)", "300", "rangeUnderflow"],
      ["Manual", "Throughput (RU/s)", "450", "stepMismatch"],
      ["Autoscale", "Maximum throughput (RU/s)", "900", "rangeUnderflow"],
      ["Autoscale", "Maximum throughput (RU/s)", "1500", "stepMismatch"],
    ]) {
      await form().getByRole("radio", { name: mode, exact: true }).check();
      const input = form().getByLabel(label);
      await input.fill(value);
      await form().getByRole("button", { name: "Create container" }).click();
      assert.equal(await input.evaluate((el, f) => el.validity[f], flaw), true, `${mode} ${value}: ${flaw}`);
    }
    // Switching modes restores each mode's own number.
    await form().getByRole("radio", { name: "Manual", exact: true }).check();
    assert.equal(await form().getByLabel("Throughput (RU/s)").inputValue(), "450");
    page.off("request", count);
    assert.equal(posted, 0);
  });

  it("offers the database's shared throughput where the database has some", async () => {
    await openDatabase("shared");
    const shared = form().getByRole("radio", { name: /Shared with the database \(600 RU\/s\)/ });
    assert.equal(await shared.isChecked(), true, "sharing is the default in a database with throughput");
    await form().getByRole("radio", { name: "Autoscale", exact: true }).check();
    await form().screenshot({ path: join(ARTIFACTS, "new-container-autoscale.png") });
    await shared.check();
    await form().screenshot({ path: join(ARTIFACTS, "new-container-shared.png") });
    const sent = await create("shared", "sharing", async () => {});
    assert.deepEqual(sent, { manual: undefined, autoscale: undefined });
    assert.equal(await offerOf((await readContainer("shared", "sharing"))._rid), null);
    await page.getByRole("navigation", { name: "Container views" }).getByRole("link", { name: "Settings" }).click();
    await page.getByText("This container has no throughput of its own: it shares its database's (600 RU/s).").waitFor();
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
