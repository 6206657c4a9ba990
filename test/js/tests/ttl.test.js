// Time-To-Live through @azure/cosmos.
//
// The contract itself (container defaultTtl and item ttl validation with
// the service's messages, expiry for every combination of container and
// item setting, and the flows of the official JS SDK's TTL tests: writes
// restart the countdown, an expired item is absent, turning TTL off and
// on) is the data file testdata/ttl/matrix, which every suite runs; here
// it runs through this SDK (lib/ttlmatrix.js) on a server whose purger is
// held, so that expired items stay stored. The tests below it are about
// the clock and about read paths over items expiring one by one.
//
// Every sleep is replaced by moving Ebb's manual clock. Item `_ts` is
// whole epoch seconds of that clock, so each test advances to exact
// seconds counted from an item's `_ts`: an item with effective ttl n is
// visible at `_ts + n - 1` and gone at `_ts + n`, on every read path
// (point read, query, COUNT and read feed).
//
// Containers here have no partition key, as in the official tests, so the
// items live in the /_partitionKey "None" partition.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { startEbb } from "../lib/server.js";
import {
  newClient,
  uniqueId,
  idsOf,
  advanceTo,
  advanceClock,
  serverTime,
  restRequest,
  resourceOf,
  openEbb,
  closeEbb,
} from "../lib/cosmos.js";
import { MatrixRunner, readMatrix } from "../lib/ttlmatrix.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-ttl")));
after(() => closeEbb({ server, client }));

/** A container without a partition key; defaultTtl undefined leaves TTL off. */
async function ttlContainer(defaultTtl) {
  const body = { id: uniqueId("ttl") };
  if (defaultTtl !== undefined) body.defaultTtl = defaultTtl;
  const { container, resource } = await database.containers.create(body);
  return { container, resource, id: body.id };
}

async function createItem(container, id, ttl) {
  const body = { id, payload: "x" };
  if (ttl !== undefined) body.ttl = ttl;
  const res = await container.items.create(body);
  assert.equal(res.statusCode, 201, `create ${id}`);
  return res.resource;
}

/**
 * Checks that exactly `visible` of the container's items can be seen, on
 * every read path, and that each of `gone` reads as 404. `when` names the
 * moment for failure messages.
 */
async function expectItems(container, { visible = [], gone = [] }, when) {
  for (const id of visible) {
    const res = await container.item(id).read();
    assert.equal(res.statusCode, 200, `${when}: point read of ${id} should find it`);
    assert.equal(res.resource?.id, id);
  }
  for (const id of gone) {
    const res = await container.item(id).read();
    assert.equal(res.statusCode, 404, `${when}: point read of ${id} should give 404`);
    assert.equal(res.resource, undefined, `${when}: no resource for ${id}`);
  }
  const want = [...visible].sort();

  const { resources: queried } = await container.items.query("SELECT * FROM root r").fetchAll();
  assert.deepEqual(idsOf(queried), want, `${when}: SELECT * FROM root r`);

  const { resources: count } = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
  assert.deepEqual(count, [visible.length], `${when}: SELECT VALUE COUNT(1) FROM c`);

  const { resources: all } = await container.items.readAll().fetchAll();
  assert.deepEqual(idsOf(all), want, `${when}: items.readAll()`);

  // The REST read feed (GET …/docs), which readAll() does not use.
  const feed = await restRequest(server.endpoint, {
    method: "GET",
    path: `/dbs/${encodeURIComponent(container.database.id)}/colls/${encodeURIComponent(container.id)}/docs`,
    headers: { "x-ms-documentdb-query-enablecrosspartition": "true" },
  });
  assert.equal(feed.status, 200, `${when}: GET …/docs answered ${feed.status}: ${feed.text}`);
  assert.deepEqual(idsOf(feed.json.Documents), want, `${when}: GET …/docs read feed`);
}

describe("clock control", () => {
  test("POST /_ebb/clock signed with the master key advances the clock", async () => {
    const before = await serverTime(server.endpoint);
    const res = await restRequest(server.endpoint, {
      method: "POST",
      path: "/_ebb/clock",
      body: { advanceSeconds: 3 },
      ...resourceOf("/_ebb/clock"),
    });
    assert.equal(res.status, 200, `clock advance refused: ${res.text}`);
    assert.equal(res.json.epochSeconds, before.epochSeconds + 3);
  });

  test("POST /_ebb/clock signed with another key gives 401", async () => {
    const res = await restRequest(server.endpoint, {
      method: "POST",
      path: "/_ebb/clock",
      body: { advanceSeconds: 1000 },
      key: randomBytes(64).toString("base64"),
      ...resourceOf("/_ebb/clock"),
    });
    assert.equal(res.status, 401);
    assert.equal(res.json?.code, "Unauthorized");
  });

  test("item _ts is whole seconds of the server clock", async () => {
    const { container } = await ttlContainer();
    const now = await advanceClock(server.endpoint, 0);
    const item = await createItem(container, "ts-probe");
    assert.ok(Number.isInteger(item._ts), `_ts ${item._ts} is an integer`);
    assert.equal(item._ts, now.epochSeconds);
    await advanceClock(server.endpoint, 7);
    const replaced = await container.item("ts-probe").replace({ id: "ts-probe" });
    assert.equal(replaced.resource._ts, now.epochSeconds + 7);
  });
});

describe("the TTL contract's data file", () => {
  let held;
  let heldClient;
  let runner;
  before(async () => {
    held = await startEbb({ extraArgs: ["--disable-purger"] });
    heldClient = newClient(held.endpoint);
    runner = new MatrixRunner({ endpoint: held.endpoint, client: heldClient });
  });
  after(() => closeEbb({ server: held, client: heldClient }));

  for (const d of readMatrix()) {
    test(`${d.pos} ${d.line}`, async () => {
      assert.equal(await runner.do(d), d.expected, `${d.pos}: ${d.line}`);
    });
  }
});

describe("expiry boundaries", () => {
  test("items with different lifetimes disappear one by one from reads, queries, COUNT, ORDER BY and paging", async () => {
    const { container } = await ttlContainer(5);
    const a = await createItem(container, "a"); // default: _ts+5
    await createItem(container, "b", 2); // _ts+2
    await createItem(container, "c", -1); // never
    await createItem(container, "d", 8); // _ts+8
    const ts = a._ts;
    const steps = [
      { at: ts + 1, visible: ["a", "b", "c", "d"] },
      { at: ts + 2, visible: ["a", "c", "d"] },
      { at: ts + 4, visible: ["a", "c", "d"] },
      { at: ts + 5, visible: ["c", "d"] },
      { at: ts + 7, visible: ["c", "d"] },
      { at: ts + 8, visible: ["c"] },
    ];
    for (const step of steps) {
      await advanceTo(server.endpoint, step.at);
      const when = `at _ts+${step.at - ts}`;
      const gone = ["a", "b", "c", "d"].filter((id) => !step.visible.includes(id));
      await expectItems(container, { visible: step.visible, gone }, when);

      const { resources: ordered } = await container.items.query("SELECT c.id FROM c ORDER BY c.id DESC").fetchAll();
      assert.deepEqual(
        ordered.map((r) => r.id),
        [...step.visible].sort().reverse(),
        `${when}: ORDER BY`,
      );
      const { resources: top } = await container.items.query("SELECT TOP 1 VALUE c.id FROM c ORDER BY c.id").fetchAll();
      assert.deepEqual(top, [step.visible.slice().sort()[0]], `${when}: TOP 1`);

      const iterator = container.items.query("SELECT * FROM c", { maxItemCount: 1 });
      const paged = [];
      while (iterator.hasMoreResults()) paged.push(...(await iterator.fetchNext()).resources);
      assert.deepEqual(idsOf(paged), [...step.visible].sort(), `${when}: paging with maxItemCount 1`);
    }
  });
});
