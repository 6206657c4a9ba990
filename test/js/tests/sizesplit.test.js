// Partitions that the server splits on its own as they grow past
// --partition-split-size (48 KB here; 50 GB by default, as on the
// service), while @azure/cosmos clients write, query and read the change
// feed: the SDK meets each split (and its children's, in quick
// succession) and carries on in the new ranges.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { uniqueId, openEbb, closeEbb, restRequest, followFeed, startWriters, checkAcrossRanges } from "../lib/cosmos.js";

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
  const feed = followFeed(c);
  await feed.drain();
  assert.equal(feed.latest.size, 10);
  const query = c.items.query("SELECT c.id FROM c", { maxItemCount: 4 });
  const firstPage = await query.fetchNext();
  assert.equal(firstPage.resources.length, 4);

  // Four writers create the rest and then rewrite every item in turn.
  const writers = startWriters(c, { n, prefix: "g", extra: { pad } });
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
  await writers.reach(writers.writes() + 200);
  await writers.stop();
  assert.ok(partitions.length >= 4, `${partitions.length} partitions`);

  // The query goes on from its continuation, over the new ranges.
  const ids = firstPage.resources.map((r) => r.id);
  while (query.hasMoreResults()) ids.push(...((await query.fetchNext()).resources ?? []).map((r) => r.id));
  // The first page was taken while there were ten items: it and the
  // rest hold each of them once, and everything written after it once
  // at most.
  assert.equal(new Set(ids).size, ids.length, "an item twice in one query");
  for (let i = 0; i < 10; i++) assert.ok(ids.includes(`g${i}`), `g${i}`);
  // ORDER BY, the change feed and bulk over the new ranges.
  await checkAcrossRanges(c, { n, prefix: "g", feed });
  const { resources: ranges } = await c.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, partitions.length);
  for (const r of ranges) assert.ok(r.parents.includes("0"), JSON.stringify(r));
});
