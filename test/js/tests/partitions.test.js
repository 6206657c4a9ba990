// A container of several physical partitions through @azure/cosmos,
// which reads its partition key ranges and runs cross-partition queries
// range by range from the query plan, merging the ranges' results itself
// (ORDER BY, TOP, OFFSET/LIMIT, aggregates, GROUP BY, DISTINCT), groups
// bulk operations by range, and reads the change feed by feed range.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";

import { uniqueId, openEbb, closeEbb, restRequest, followFeed, startWriters, checkAcrossRanges } from "../lib/cosmos.js";

let server;
let client;
let database;
let container;
const items = 100;

before(async () => {
  ({ server, client, database } = await openEbb("db-parts"));
  ({ container } = await database.containers.create(
    { id: uniqueId("c"), partitionKey: { paths: ["/pk"], version: 2 } },
    { initialHeaders: { "x-ebb-partition-count": "4" } },
  ));
  for (let i = 0; i < items; i++) {
    await container.items.create({ id: `i${i}`, pk: `k${i}`, n: i, g: i % 5 });
  }
});
after(() => closeEbb({ server, client }));

async function all(query, options = {}) {
  const { resources } = await container.items.query(query, { maxItemCount: 7, ...options }).fetchAll();
  return resources;
}

// A server that splits ranges on its own (EBB_PARTITION_SPLIT_SIZE, as
// scripts/test runs this suite a second time) changes the layouts that
// two tests set up and then check exactly; they are skipped there.
const splitsOnItsOwn = process.env.EBB_PARTITION_SPLIT_SIZE
  ? { skip: "the server splits ranges on its own (EBB_PARTITION_SPLIT_SIZE)" }
  : {};

describe("physical partitions", () => {
  test("the container has four ranges that tile the key space", splitsOnItsOwn, async () => {
    const { resources } = await container.readPartitionKeyRanges().fetchAll();
    assert.equal(resources.length, 4);
    assert.equal(resources[0].minInclusive, "");
    assert.equal(resources[3].maxExclusive, "FF");
    for (let i = 1; i < 4; i++) assert.equal(resources[i].minInclusive, resources[i - 1].maxExclusive);
    const ranges = await container.getFeedRanges();
    assert.equal(ranges.length, 4);
  });

  test("cross-partition ORDER BY, TOP and OFFSET LIMIT merge the ranges in order", async () => {
    const desc = await all("SELECT VALUE c.n FROM c ORDER BY c.n DESC");
    assert.deepEqual(desc, Array.from({ length: items }, (_, i) => items - 1 - i));
    assert.deepEqual(await all("SELECT TOP 3 VALUE c.n FROM c ORDER BY c.n"), [0, 1, 2]);
    assert.deepEqual(await all("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 10 LIMIT 4"), [10, 11, 12, 13]);
  });

  test("aggregates, GROUP BY and DISTINCT count every range once", async () => {
    assert.deepEqual(await all("SELECT VALUE COUNT(1) FROM c"), [items]);
    assert.deepEqual(await all("SELECT VALUE SUM(c.n) FROM c"), [(items * (items - 1)) / 2]);
    const groups = await all("SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g");
    assert.deepEqual(
      groups.sort((a, b) => a.g - b.g),
      [0, 1, 2, 3, 4].map((g) => ({ g, n: items / 5 })),
    );
    // c.g + 1: the SDK's unordered DISTINCT drops falsy values (0), as it
    // would against the service (UnorderedDistinctEndpointComponent).
    assert.deepEqual((await all("SELECT DISTINCT VALUE c.g + 1 FROM c")).sort(), [1, 2, 3, 4, 5]);
  });

  test("a query for one partition key reads its range only", async () => {
    assert.deepEqual(await all("SELECT VALUE c.id FROM c", { partitionKey: "k42" }), ["i42"]);
  });

  test("bulk operations across ranges", async () => {
    const ops = Array.from({ length: 40 }, (_, i) => ({ operationType: "Upsert", resourceBody: { id: `b${i}`, pk: `b${i}`, n: -1 } }));
    const results = await container.items.bulk(ops);
    assert.deepEqual(
      results.map((r) => r.statusCode),
      ops.map(() => 201),
    );
    assert.deepEqual(await all("SELECT VALUE COUNT(1) FROM c WHERE c.n = -1"), [40]);
  });

  test("the change feed reads every range, and each range on its own", async () => {
    const iterator = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 11 });
    const seen = new Set();
    let token;
    for (let i = 0; i < 1000; i++) {
      const res = await iterator.readNext();
      token = res.continuationToken;
      if (res.statusCode === StatusCodes.NotModified) break;
      for (const doc of res.result) seen.add(doc.id);
    }
    assert.equal(seen.size, items + 40);

    await container.item("i5", "k5").replace({ id: "i5", pk: "k5", n: 500, g: 0 });
    const next = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(token) });
    const changes = [];
    for (let i = 0; i < 100; i++) {
      const res = await next.readNext();
      if (res.statusCode === StatusCodes.NotModified) break;
      changes.push(...res.result);
    }
    assert.deepEqual(
      changes.map((d) => [d.id, d.n]),
      [["i5", 500]],
    );

    let total = 0;
    for (const range of await container.getFeedRanges()) {
      const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) });
      for (let i = 0; i < 1000; i++) {
        const res = await it.readNext();
        if (res.statusCode === StatusCodes.NotModified) break;
        total += res.result.length;
      }
    }
    assert.equal(total, items + 40);
  });

  test("vector and full-text rankings across ranges match one range's", async () => {
    // The same items in a container of one range and in one of four:
    // the SDK merges the four ranges' vector rankings, and sums their
    // full-text statistics before ranking (the plan's hybrid section),
    // so both must rank exactly as the single range does.
    const policy = {
      partitionKey: { paths: ["/pk"], version: 2 },
      vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 3 }] },
      fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] },
      indexingPolicy: { fullTextIndexes: [{ path: "/text" }], vectorIndexes: [{ path: "/v", type: "flat" }] },
    };
    // Every item has its own counts of the two terms and its own length
    // (i mod 4, 3 and 13 are unique below 156), so no two rank alike and
    // the rankings have one right order.
    const docs = Array.from({ length: 60 }, (_, i) => {
      const words = [...Array(i % 4).fill("alpha"), ...Array(i % 3).fill("delta")];
      while (words.length < 5 + (i % 13)) words.push(`filler${i}x${words.length}`);
      return { id: `d${i}`, pk: `p${i}`, text: words.join(" "), v: [Math.sin(i), Math.cos(i), ((i % 7) - 3) / 3] };
    });
    const make = async (parts) => {
      const { container: c } = await database.containers.create(
        { id: uniqueId("s"), ...policy },
        { initialHeaders: { "x-ebb-partition-count": String(parts) } },
      );
      for (const d of docs) await c.items.create(d);
      return c;
    };
    const one = await make(1);
    const four = await make(4);
    const queries = [
      { query: "SELECT TOP 7 c.id FROM c ORDER BY VectorDistance(c.v, @q)", parameters: [{ name: "@q", value: [0.3, -0.8, 0.2] }] },
      { query: "SELECT TOP 7 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'alpha', 'delta')" },
      { query: "SELECT TOP 7 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'alpha'), VectorDistance(c.v, @q), [1, 3])", parameters: [{ name: "@q", value: [1, 0, 0] }] },
    ];
    for (const q of queries) {
      const ids = async (c) => (await c.items.query(q).fetchAll()).resources.map((r) => r.id);
      const want = await ids(one);
      assert.equal(want.length, 7, q.query);
      assert.deepEqual(await ids(four), want, q.query);
    }
  });

  test("a range split under load: queries, bulk and the change feed carry on in its children", splitsOnItsOwn, async () => {
    const { container: c } = await database.containers.create(
      { id: uniqueId("split"), partitionKey: { paths: ["/pk"], version: 2 } },
      { initialHeaders: { "x-ebb-partition-count": "2" } },
    );
    const n = 120;
    for (let i = 0; i < n; i++) await c.items.create({ id: `s${i}`, pk: `s${i}`, v: 1 });
    // A change feed read to its end, and a cross-partition query stopped
    // after its first page, both from before the split. (An ORDER BY
    // query caught in a split does not recover in this version of the
    // SDK: it asks for the split range again and again, whatever the
    // server answers; a new one after the split runs over the new ranges.)
    const feed = followFeed(c);
    await feed.drain();
    assert.equal(feed.latest.size, n);
    const query = c.items.query("SELECT c.id FROM c", { maxItemCount: 10 });
    const firstPage = await query.fetchNext();
    assert.equal(firstPage.resources.length, 10);

    // Writers go on while range 0 is split.
    const writers = startWriters(c, { n, prefix: "s" });
    await writers.reach(100);
    const split = await restRequest(server.endpoint, {
      method: "POST",
      path: `/_ebb/containers/${database.id}/${c.id}/split`,
      body: { partitionKeyRangeId: "0" },
    });
    assert.equal(split.status, 200, split.text);
    await writers.reach(writers.writes() + 100);
    await writers.stop();

    // The query goes on from its continuation, over the new ranges.
    const ids = firstPage.resources.map((r) => r.id);
    while (query.hasMoreResults()) ids.push(...((await query.fetchNext()).resources ?? []).map((r) => r.id));
    assert.deepEqual(ids.sort(), Array.from({ length: n }, (_, i) => `s${i}`).sort());
    // ORDER BY, the change feed and bulk over the new ranges.
    await checkAcrossRanges(c, { n, prefix: "s", feed });
    const { resources: ranges } = await c.readPartitionKeyRanges().fetchAll();
    assert.deepEqual(
      ranges.map((r) => [r.id, r.parents]),
      [
        ["2", ["0"]],
        ["3", ["0"]],
        ["1", []],
      ],
    );
  });
});
