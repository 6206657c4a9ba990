// Partitions that the server splits on its own as they grow past
// --partition-split-size (48 KB here; 50 GB by default, as on the
// service), while @azure/cosmos clients write, query and read the change
// feed: the SDK meets each split (and its children's, in quick
// succession) and carries on in the new ranges.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";

import { uniqueId, openEbb, closeEbb, restRequest } from "../lib/cosmos.js";

const splitSize = 48 << 10;
let server;
let client;
let database;

before(async () => {
  ({ server, client, database } = await openEbb("db-size", { extraArgs: ["--partition-split-size", String(splitSize)] }));
});
after(() => closeEbb({ server, client }));

test("a range that grows past the split size is split, and its children, while clients write, query and read the feed", async () => {
  const { container: c } = await database.containers.create({ id: uniqueId("grow"), partitionKey: { paths: ["/pk"], version: 2 } });
  const pad = "x".repeat(1500);
  const n = 120; // about 190 KB: four partitions or more
  for (let i = 0; i < 10; i++) await c.items.create({ id: `g${i}`, pk: `g${i}`, v: 1, pad });

  // A change feed read to its end, and a cross-partition query stopped
  // after its first page, both while there is one range.
  const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 17 });
  const latest = new Map();
  const drain = async () => {
    for (let i = 0; i < 1000; i++) {
      const res = await feed.readNext();
      if (res.statusCode === StatusCodes.NotModified) return;
      for (const d of res.result) latest.set(d.id, d.v);
    }
  };
  await drain();
  assert.equal(latest.size, 10);
  const query = c.items.query("SELECT c.id FROM c", { maxItemCount: 4 });
  const firstPage = await query.fetchNext();
  assert.equal(firstPage.resources.length, 4);

  // Four writers create the rest and then rewrite every item in turn.
  let stop = false;
  let writes = 0;
  const writers = Array.from({ length: 4 }, (_, w) =>
    (async () => {
      for (let v = 2; !stop; v++) {
        for (let i = w; i < n && !stop; i += 4) {
          await c.items.upsert({ id: `g${i}`, pk: `g${i}`, v, pad });
          writes++;
        }
      }
    })(),
  );
  // Until every partition is counted and within the split size.
  const settled = async () => {
    const res = await restRequest(server.endpoint, { method: "GET", path: `/_ebb/containers/${database.id}/${c.id}/partitions` });
    assert.equal(res.status, 200, res.text);
    const { partitions } = res.json;
    const items = partitions.reduce((s, p) => s + p.items, 0);
    return items === n && partitions.every((p) => p.counted && p.documentBytes <= splitSize) ? partitions : null;
  };
  let partitions;
  for (let i = 0; !(partitions = await settled()); i++) {
    assert.ok(i < 2000, "the partitions did not settle");
    await new Promise((r) => setTimeout(r, 5));
  }
  const until = writes + 200;
  while (writes < until) await new Promise((r) => setImmediate(r));
  stop = true;
  await Promise.all(writers);
  assert.ok(partitions.length >= 4, `${partitions.length} partitions`);

  // The query goes on from its continuation, over the new ranges.
  const ids = firstPage.resources.map((r) => r.id);
  while (query.hasMoreResults()) ids.push(...((await query.fetchNext()).resources ?? []).map((r) => r.id));
  const all = Array.from({ length: n }, (_, i) => `g${i}`).sort();
  // The first page was taken while there were ten items: it and the
  // rest hold each of them once, and everything written after it once
  // at most.
  assert.equal(new Set(ids).size, ids.length, "an item twice in one query");
  for (let i = 0; i < 10; i++) assert.ok(ids.includes(`g${i}`), `g${i}`);
  const { resources: ordered } = await c.items.query("SELECT VALUE c.id FROM c ORDER BY c.id", { maxItemCount: 9 }).fetchAll();
  assert.deepEqual(ordered, all);
  // The change feed, read on, ends with every item's last version.
  await drain();
  const { resources: items } = await c.items.query("SELECT c.id, c.v FROM c").fetchAll();
  assert.equal(items.length, n);
  for (const it of items) assert.equal(latest.get(it.id), it.v, it.id);
  // Bulk across the new ranges.
  const bulk = await c.items.bulk(items.slice(0, 30).map((it) => ({ operationType: "Upsert", resourceBody: { id: it.id, pk: it.id, v: 0 } })));
  assert.ok(bulk.every((r) => r.statusCode === 200), JSON.stringify(bulk.map((r) => r.statusCode)));
  const { resources: ranges } = await c.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, partitions.length);
  for (const r of ranges) assert.ok(r.parents.includes("0"), JSON.stringify(r));
});
