// Time-To-Live through @azure/cosmos.
//
// These are the flows of the official JS SDK's TTL tests (container
// defaultTtl validation, item ttl validation, expiry for every combination
// of container and item setting, and the "misc" cases), with every sleep
// replaced by moving Ebb's manual clock. Item `_ts` is whole epoch seconds
// of that clock, so each test advances to exact seconds counted from an
// item's `_ts`: an item with effective ttl n is visible at `_ts + n - 1`
// and gone at `_ts + n`, on every read path (point read, query, COUNT and
// read feed).
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
  expectCosmosError,
  idsOf,
  advanceTo,
  advanceClock,
  serverTime,
  restRequest,
  resourceOf,
  openEbb,
  closeEbb,
} from "../lib/cosmos.js";

const YEAR = 365 * 24 * 3600;
const MAX_TTL = 2147483647;

const ttlMessage = (v) =>
  `The input ttl '${v}' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire.`;

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

describe("container defaultTtl validation", () => {
  for (const value of [0, -10, -2, 2147483648]) {
    test(`defaultTtl ${value} is rejected with 400`, async () => {
      await expectCosmosError(database.containers.create({ id: uniqueId("ttl-bad"), defaultTtl: value }), 400);
    });
  }

  for (const value of [-1, 5, MAX_TTL]) {
    test(`defaultTtl ${value} is accepted and echoed on create and read`, async () => {
      const { container, resource } = await ttlContainer(value);
      assert.equal(resource.defaultTtl, value);
      const { resource: read } = await container.read();
      assert.equal(read.defaultTtl, value);
    });
  }

  test("defaultTtl null is accepted and means TTL off", async () => {
    const created = await database.containers.create({ id: uniqueId("ttl-null"), defaultTtl: null });
    assert.equal(created.statusCode, 201);
    const { resource } = await created.container.read();
    assert.equal(resource.defaultTtl ?? null, null);
    await createItem(created.container, "kept", 1);
    const { epochSeconds } = await serverTime(server.endpoint);
    await advanceTo(server.endpoint, epochSeconds + 10);
    await expectItems(created.container, { visible: ["kept"] }, "TTL off via null");
  });

  test("replacing a container with an invalid defaultTtl gives 400", async () => {
    const { container, id, resource } = await ttlContainer(5);
    await expectCosmosError(container.replace({ id, partitionKey: resource.partitionKey, defaultTtl: 0 }), 400);
    assert.equal((await container.read()).resource.defaultTtl, 5);
  });
});

describe("item ttl validation on a container with TTL on", () => {
  let container;
  before(async () => {
    ({ container } = await ttlContainer(5));
  });

  for (const value of [0, -10, null]) {
    test(`create with ttl ${value} gives 400 with the Cosmos message`, async () => {
      await expectCosmosError(container.items.create({ id: uniqueId("bad"), ttl: value }), 400, {
        messageIncludes: ttlMessage(String(value)),
      });
    });
  }

  test("upsert and replace with an invalid ttl give 400 with the Cosmos message", async () => {
    const id = uniqueId("bad-write");
    await createItem(container, id);
    await expectCosmosError(container.items.upsert({ id, ttl: 0 }), 400, { messageIncludes: ttlMessage("0") });
    await expectCosmosError(container.items.upsert({ id: uniqueId("bad-upsert-new"), ttl: null }), 400, {
      messageIncludes: ttlMessage("null"),
    });
    await expectCosmosError(container.item(id).replace({ id, ttl: -10 }), 400, { messageIncludes: ttlMessage("-10") });
    const { resource } = await container.item(id).read();
    assert.equal("ttl" in resource, false, "the failed writes left the item alone");
  });

  test("patch that sets an invalid ttl gives 400", async () => {
    const id = uniqueId("bad-patch");
    await createItem(container, id);
    await expectCosmosError(container.item(id).patch([{ op: "set", path: "/ttl", value: 0 }]), 400, {
      messageIncludes: ttlMessage("0"),
    });
  });

  for (const value of [-2, 2147483648, 10.5, "10", true]) {
    test(`create with ttl ${JSON.stringify(value)} gives 400`, async () => {
      await expectCosmosError(container.items.create({ id: uniqueId("bad"), ttl: value }), 400);
    });
  }

  test(`ttl ${MAX_TTL} is accepted and does not overflow (expiry far in the future)`, async () => {
    const item = await createItem(container, uniqueId("max"), MAX_TTL);
    assert.equal(item.ttl, MAX_TTL);
    await advanceTo(server.endpoint, item._ts + YEAR);
    await expectItems(container, { visible: [item.id] }, "a year after a max-ttl write");
    await container.item(item.id).delete();
  });
});

describe("item ttl on a container with TTL off", () => {
  test("ttl values are stored as written and not interpreted", async () => {
    const { container } = await ttlContainer();
    const values = { zero: 0, negative: -10, nul: null, short: 1 };
    for (const [id, ttl] of Object.entries(values)) {
      const res = await container.items.create({ id, ttl });
      assert.equal(res.statusCode, 201, `ttl ${ttl} accepted while TTL is off`);
      assert.equal(res.resource.ttl, ttl);
    }
    const { epochSeconds } = await serverTime(server.endpoint);
    await advanceTo(server.endpoint, epochSeconds + 100);
    await expectItems(container, { visible: Object.keys(values) }, "100 s later, TTL off");
    for (const [id, ttl] of Object.entries(values)) {
      assert.equal((await container.item(id).read()).resource.ttl, ttl);
    }
  });
});

// The matrix: container defaultTtl (absent, -1, n) × item ttl (absent, -1, n).
// expiresAfter is the effective ttl, or null for never.
const matrix = [
  { defaultTtl: undefined, ttl: undefined, expiresAfter: null, why: "TTL is off" },
  { defaultTtl: undefined, ttl: -1, expiresAfter: null, why: "TTL is off" },
  { defaultTtl: undefined, ttl: 4, expiresAfter: null, why: "item ttl is ignored while TTL is off" },
  { defaultTtl: -1, ttl: undefined, expiresAfter: null, why: "-1 means no default expiry" },
  { defaultTtl: -1, ttl: -1, expiresAfter: null, why: "-1 pins the item" },
  { defaultTtl: -1, ttl: 4, expiresAfter: 4, why: "item ttl applies once TTL is on" },
  { defaultTtl: 6, ttl: undefined, expiresAfter: 6, why: "the item inherits the default" },
  { defaultTtl: 6, ttl: -1, expiresAfter: null, why: "-1 pins the item against the default" },
  { defaultTtl: 6, ttl: 4, expiresAfter: 4, why: "a shorter item ttl overrides the default" },
  { defaultTtl: 6, ttl: 9, expiresAfter: 9, why: "a longer item ttl overrides the default" },
];

describe("expiry matrix: container defaultTtl × item ttl", () => {
  for (const row of matrix) {
    const name =
      `defaultTtl ${row.defaultTtl ?? "absent"} × ttl ${row.ttl ?? "absent"}: ` +
      (row.expiresAfter === null ? "never expires" : `visible at _ts+${row.expiresAfter - 1}, gone at _ts+${row.expiresAfter}`) +
      ` (${row.why})`;
    test(name, async () => {
      const { container } = await ttlContainer(row.defaultTtl);
      const item = await createItem(container, "item", row.ttl);
      if (row.ttl === undefined) {
        assert.equal("ttl" in item, false, "the default is not written into the item");
      } else {
        assert.equal(item.ttl, row.ttl);
      }

      if (row.expiresAfter === null) {
        await expectItems(container, { visible: ["item"] }, "right after create");
        await advanceTo(server.endpoint, item._ts + YEAR);
        await expectItems(container, { visible: ["item"] }, "a year later");
        const { resource } = await container.item("item").read();
        assert.equal(resource.ttl, row.ttl, "ttl reads back as written");
        return;
      }
      await advanceTo(server.endpoint, item._ts + row.expiresAfter - 1);
      await expectItems(container, { visible: ["item"] }, `at _ts+${row.expiresAfter - 1}`);
      await advanceTo(server.endpoint, item._ts + row.expiresAfter);
      await expectItems(container, { gone: ["item"] }, `at _ts+${row.expiresAfter}`);
    });
  }
});

describe("expiry boundaries", () => {
  test("an item with ttl 1 is visible in the second it was written and gone the next", async () => {
    const { container } = await ttlContainer(-1);
    const item = await createItem(container, "one", 1);
    await expectItems(container, { visible: ["one"] }, "at _ts");
    await advanceTo(server.endpoint, item._ts + 1);
    await expectItems(container, { gone: ["one"] }, "at _ts+1");
  });

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

describe("misc cases", () => {
  test("after an item expires, creating the same id again gives 201", async () => {
    const { container } = await ttlContainer(8);
    const first = await createItem(container, "again");
    await advanceTo(server.endpoint, first._ts + 8);
    await expectItems(container, { gone: ["again"] }, "at _ts+8");

    const again = await container.items.create({ id: "again", payload: "second life" });
    assert.equal(again.statusCode, 201);
    assert.equal(again.resource._ts, first._ts + 8);
    assert.notEqual(again.resource._etag, first._etag);
    await expectItems(container, { visible: ["again"] }, "after re-create");
    assert.equal((await container.item("again").read()).resource.payload, "second life");
  });

  test("upsert resets the countdown", async () => {
    const { container } = await ttlContainer(8);
    const first = await createItem(container, "up");
    await advanceTo(server.endpoint, first._ts + 3);
    const upserted = await container.items.upsert({ id: "up", payload: "y" });
    assert.equal(upserted.statusCode, 200);
    const ts = upserted.resource._ts;
    assert.equal(ts, first._ts + 3);

    await advanceTo(server.endpoint, ts + 7); // past the first write's expiry
    await expectItems(container, { visible: ["up"] }, "7 s after the upsert");
    await advanceTo(server.endpoint, ts + 8);
    await expectItems(container, { gone: ["up"] }, "8 s after the upsert");
  });

  test("replace resets the countdown", async () => {
    const { container } = await ttlContainer(8);
    const first = await createItem(container, "rep");
    await advanceTo(server.endpoint, first._ts + 5);
    const { resource } = await container.item("rep").replace({ id: "rep", payload: "z" });
    assert.equal(resource._ts, first._ts + 5);
    await advanceTo(server.endpoint, resource._ts + 7);
    await expectItems(container, { visible: ["rep"] }, "7 s after the replace");
    await advanceTo(server.endpoint, resource._ts + 8);
    await expectItems(container, { gone: ["rep"] }, "8 s after the replace");
  });

  test("patch resets the countdown", async () => {
    const { container } = await ttlContainer(8);
    const first = await createItem(container, "pat");
    await advanceTo(server.endpoint, first._ts + 5);
    const { resource } = await container.item("pat").patch([{ op: "set", path: "/payload", value: "p" }]);
    assert.equal(resource._ts, first._ts + 5);
    await advanceTo(server.endpoint, resource._ts + 7);
    await expectItems(container, { visible: ["pat"] }, "7 s after the patch");
    await advanceTo(server.endpoint, resource._ts + 8);
    await expectItems(container, { gone: ["pat"] }, "8 s after the patch");
  });

  test("an expired item is absent to replace, patch and delete (404), even with If-Match on its etag", async () => {
    const { container } = await ttlContainer(5);
    const item = await createItem(container, "ghost");
    await advanceTo(server.endpoint, item._ts + 5);
    await expectCosmosError(container.item("ghost").replace({ id: "ghost" }), 404);
    await expectCosmosError(container.item("ghost").patch([{ op: "set", path: "/payload", value: 1 }]), 404);
    await expectCosmosError(container.item("ghost").delete(), 404);
    const ifMatch = { accessCondition: { type: "IfMatch", condition: item._etag } };
    await expectCosmosError(container.item("ghost").replace({ id: "ghost" }, ifMatch), 404);
    await expectCosmosError(container.item("ghost").delete(ifMatch), 404);
  });

  test("upsert over an expired item creates a fresh one (201)", async () => {
    const { container } = await ttlContainer(5);
    const item = await createItem(container, "phoenix");
    await advanceTo(server.endpoint, item._ts + 6);
    const res = await container.items.upsert({ id: "phoenix", payload: "new" });
    assert.equal(res.statusCode, 201);
    assert.equal(res.resource._ts, item._ts + 6);
    await advanceTo(server.endpoint, res.resource._ts + 4);
    await expectItems(container, { visible: ["phoenix"] }, "4 s after the upsert");
  });

  test("ttl -1 pins an item, whether written at create, by replace or by patch", async () => {
    const { container } = await ttlContainer(5);
    const created = await createItem(container, "pinned-create", -1);
    await createItem(container, "pinned-replace");
    await createItem(container, "pinned-patch");
    await createItem(container, "unpinned");
    await container.item("pinned-replace").replace({ id: "pinned-replace", ttl: -1 });
    await container.item("pinned-patch").patch([{ op: "add", path: "/ttl", value: -1 }]);

    await advanceTo(server.endpoint, created._ts + YEAR);
    await expectItems(
      container,
      { visible: ["pinned-create", "pinned-replace", "pinned-patch"], gone: ["unpinned"] },
      "a year later",
    );
    for (const id of ["pinned-create", "pinned-replace", "pinned-patch"]) {
      assert.equal((await container.item(id).read()).resource.ttl, -1, `${id} reads back ttl -1`);
    }
  });

  test("removing an item's own ttl makes it inherit the default again", async () => {
    const { container } = await ttlContainer(5);
    const item = await createItem(container, "fallback", 1000);
    await advanceTo(server.endpoint, item._ts + 10);
    const { resource } = await container.item("fallback").replace({ id: "fallback" });
    await advanceTo(server.endpoint, resource._ts + 4);
    await expectItems(container, { visible: ["fallback"] }, "4 s after dropping ttl");
    await advanceTo(server.endpoint, resource._ts + 5);
    await expectItems(container, { gone: ["fallback"] }, "5 s after dropping ttl");
  });

  test("container.replace({id, partitionKey}) turns TTL off: new items then never expire", async () => {
    const { container, id, resource } = await ttlContainer(8);
    const replaced = await container.replace({ id, partitionKey: resource.partitionKey });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.resource.defaultTtl ?? null, null);
    assert.equal((await container.read()).resource.defaultTtl ?? null, null);

    const item = await createItem(container, "after-off");
    await advanceTo(server.endpoint, item._ts + 5);
    await expectItems(container, { visible: ["after-off"] }, "5 s later");
    await advanceTo(server.endpoint, item._ts + YEAR);
    await expectItems(container, { visible: ["after-off"] }, "a year later");
  });

  // Only an item the purger has not deleted yet can come back, and on a
  // manual clock the purger deletes an item within milliseconds of the
  // advance that expires it. The test therefore runs on a server started
  // with its purger held.
  test("turning TTL off makes expired but unpurged items visible again", async () => {
    const held = await startEbb({ extraArgs: ["--disable-purger"] });
    const heldClient = newClient(held.endpoint);
    try {
      const { database: db } = await heldClient.databases.createIfNotExists({ id: database.id });
      const id = uniqueId("ttl-revive");
      const { container, resource } = await db.containers.create({ id, defaultTtl: 5 });
      const item = await createItem(container, "revived");
      await advanceTo(held.endpoint, item._ts + 5);
      assert.equal((await container.item("revived").read()).statusCode, 404, "expired at _ts+5");

      await container.replace({ id, partitionKey: resource.partitionKey });
      assert.equal((await container.item("revived").read()).statusCode, 200, "visible again after TTL off");
      const { resources } = await container.items.query("SELECT * FROM root r").fetchAll();
      assert.deepEqual(idsOf(resources), ["revived"]);
    } finally {
      heldClient.dispose();
      await held.stop();
    }
  });

  test("turning TTL on applies to items already stored", async () => {
    const { container, id, resource } = await ttlContainer();
    const old = await createItem(container, "old");
    const own = await createItem(container, "own-ttl", 500);
    await advanceTo(server.endpoint, old._ts + 100);
    await expectItems(container, { visible: ["old", "own-ttl"] }, "TTL still off");

    await container.replace({ id, partitionKey: resource.partitionKey, defaultTtl: 50 });
    await expectItems(container, { visible: ["own-ttl"], gone: ["old"] }, "right after TTL on (default 50)");
    await advanceTo(server.endpoint, own._ts + 499);
    await expectItems(container, { visible: ["own-ttl"] }, "at _ts+499");
    await advanceTo(server.endpoint, own._ts + 500);
    await expectItems(container, { gone: ["own-ttl"] }, "at _ts+500");
  });

  test("changing defaultTtl applies at once to items already stored", async () => {
    const { container, id, resource } = await ttlContainer(100);
    const item = await createItem(container, "shorter");
    await advanceTo(server.endpoint, item._ts + 10);
    await expectItems(container, { visible: ["shorter"] }, "default 100, at _ts+10");

    await container.replace({ id, partitionKey: resource.partitionKey, defaultTtl: 11 });
    await expectItems(container, { visible: ["shorter"] }, "default 11, at _ts+10");
    await container.replace({ id, partitionKey: resource.partitionKey, defaultTtl: 10 });
    await expectItems(container, { gone: ["shorter"] }, "default 10, at _ts+10");
  });
});
