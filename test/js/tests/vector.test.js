// Vector search through @azure/cosmos: the vectorEmbeddingPolicy and
// vectorIndexes as the service validates them, and VectorDistance in
// projections, filters and ORDER BY, checked against a brute-force
// oracle computed here.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, advanceClock, openEbb, closeEbb, expectCosmosError } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-vector")));
after(() => closeEbb({ server, client }));

const DIMS = 8;

/** A deterministic pseudo-random vector. */
function vec(seed) {
  let x = seed * 7919 + 17;
  return Array.from({ length: DIMS }, () => {
    x = (x * 48271) % 2147483647;
    return Math.round(((x / 2147483647) * 2 - 1) * 1000) / 1000;
  });
}

const distance = {
  cosine: (a, b) => {
    const dot = a.reduce((s, x, i) => s + x * b[i], 0);
    const n = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    return dot / (n(a) * n(b));
  },
  dotproduct: (a, b) => a.reduce((s, x, i) => s + x * b[i], 0),
  euclidean: (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0)),
};

function policy(fn, type = "flat") {
  return {
    partitionKey: { paths: ["/pk"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/embedding", dataType: "float32", distanceFunction: fn, dimensions: DIMS }] },
    indexingPolicy: { excludedPaths: [{ path: "/embedding/*" }], vectorIndexes: [{ path: "/embedding", type }] },
  };
}

describe("vector search", () => {
  for (const fn of ["cosine", "dotproduct", "euclidean"]) {
    test(`${fn}: TOP k by VectorDistance matches a brute-force oracle, in a partition and across partitions`, async () => {
      const { container } = await database.containers.create({ id: uniqueId("v"), ...policy(fn, fn === "euclidean" ? "diskANN" : "quantizedFlat") });
      const docs = Array.from({ length: 40 }, (_, i) => ({ id: `d${i}`, pk: i % 2 ? "odd" : "even", embedding: vec(i) }));
      for (const d of docs) await container.items.create(d);
      const q = vec(1000);
      const better = fn === "euclidean" ? (x, y) => x.s - y.s : (x, y) => y.s - x.s;
      const oracle = (pool) => pool.map((d) => ({ id: d.id, s: distance[fn](d.embedding, q) })).sort(better).slice(0, 5);
      const query = {
        query: "SELECT TOP 5 c.id, VectorDistance(c.embedding, @q) AS s FROM c ORDER BY VectorDistance(c.embedding, @q)",
        parameters: [{ name: "@q", value: q }],
      };
      const { resources: inPartition } = await container.items.query(query, { partitionKey: "even" }).fetchAll();
      const want = oracle(docs.filter((d) => d.pk === "even"));
      assert.deepEqual(inPartition.map((r) => r.id), want.map((r) => r.id));
      inPartition.forEach((r, i) => assert.ok(Math.abs(r.s - want[i].s) < 1e-9, `${r.s} vs ${want[i].s}`));

      const { resources: across } = await container.items.query(query).fetchAll();
      assert.deepEqual(across.map((r) => r.id), oracle(docs).map((r) => r.id));

      // Without TOP the SDK refuses a vector search across partitions,
      // as against the service, whose plan (Ebb's too) merges the ranges
      // without streaming (hasNonStreamingOrderBy).
      const unbounded = { query: query.query.replace("TOP 5 ", ""), parameters: query.parameters };
      await assert.rejects(container.items.query(unbounded).fetchAll(), /without TOP or LIMIT/);
      const { resources: all } = await container.items.query(unbounded, { partitionKey: "odd" }).fetchAll();
      assert.equal(all.length, 20);
    });
  }

  test("diskANN: an approximate top 10 across partitions close to the oracle's, bruteForce exact, and the graph following writes", async () => {
    const { container } = await database.containers.create({ id: uniqueId("v"), ...policy("euclidean", "diskANN") });
    const docs = Array.from({ length: 400 }, (_, i) => ({ id: `d${i}`, pk: `p${i % 4}`, embedding: vec(i) }));
    await Promise.all(docs.map((d) => container.items.create(d)));
    const top = async (q, bruteForce) => {
      const query = {
        query: `SELECT TOP 10 c.id, VectorDistance(c.embedding, @q) AS s FROM c ORDER BY VectorDistance(c.embedding, @q${bruteForce ? ", true" : ""})`,
        parameters: [{ name: "@q", value: q }],
      };
      return (await container.items.query(query).fetchAll()).resources;
    };
    let found = 0;
    for (let seed = 5000; seed < 5010; seed++) {
      const q = vec(seed);
      const oracle = docs.map((d) => ({ id: d.id, s: distance.euclidean(d.embedding, q) })).sort((x, y) => x.s - y.s).slice(0, 10);
      const exact = await top(q, true);
      assert.deepEqual(exact.map((r) => r.id), oracle.map((r) => r.id));
      const approximate = await top(q, false);
      assert.equal(approximate.length, 10);
      for (let i = 1; i < approximate.length; i++) assert.ok(approximate[i - 1].s <= approximate[i].s, "ordered by distance");
      found += approximate.filter((r) => oracle.some((o) => o.id === r.id)).length;
    }
    assert.ok(found / 100 >= 0.9, `recall@10 ${found / 100}`);

    const q = vec(6000);
    await container.items.upsert({ id: "d7", pk: "p3", embedding: q });
    await container.item("d8", "p0").delete();
    const after = await top(q, false);
    assert.equal(after[0].id, "d7");
    assert.equal(after[0].s, 0);
    assert.ok(!after.some((r) => r.id === "d8"));
  });

  test("filters, options and expired items", async () => {
    const { container } = await database.containers.create({ id: uniqueId("v"), ...policy("cosine"), defaultTtl: -1 });
    await container.items.create({ id: "a", pk: "p", kind: "x", embedding: [1, 0, 0, 0, 0, 0, 0, 0] });
    await container.items.create({ id: "b", pk: "p", kind: "y", embedding: [0.9, 0.1, 0, 0, 0, 0, 0, 0] });
    await container.items.create({ id: "gone", pk: "p", kind: "x", ttl: 10, embedding: [1, 0, 0, 0, 0, 0, 0, 0] });
    await advanceClock(server.endpoint, 11);
    const q = [1, 0, 0, 0, 0, 0, 0, 0];
    const { resources } = await container.items
      .query({ query: "SELECT VALUE c.id FROM c WHERE c.kind = 'x' OR c.kind = 'y' ORDER BY VectorDistance(c.embedding, @q)", parameters: [{ name: "@q", value: q }] }, { partitionKey: "p" })
      .fetchAll();
    assert.deepEqual(resources, ["a", "b"]);
    const { resources: euclid } = await container.items
      .query({ query: "SELECT VALUE VectorDistance(c.embedding, @q, true, {distanceFunction: 'euclidean'}) FROM c WHERE c.id = 'b'", parameters: [{ name: "@q", value: q }] }, { partitionKey: "p" })
      .fetchAll();
    assert.ok(Math.abs(euclid[0] - Math.sqrt(0.01 + 0.01)) < 1e-9);
  });

  test("policies are validated as the service validates them, and the embedding policy cannot change", async () => {
    const base = { id: uniqueId("v"), partitionKey: { paths: ["/pk"] } };
    const emb = (e) => ({ ...base, id: uniqueId("v"), vectorEmbeddingPolicy: { vectorEmbeddings: e } });
    const one = { path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 8 };
    for (const [body, text] of [
      [emb([one, one]), "appears more than once"],
      [emb([{ ...one, path: "/pk" }]), "partition key"],
      [emb([{ ...one, dimensions: 0 }]), "dimensions"],
      [emb([{ ...one, dimensions: 4097 }]), "dimensions"],
      [emb([{ ...one, dataType: "float64" }]), "dataType"],
      [emb([{ ...one, distanceFunction: "manhattan" }]), "distanceFunction"],
      [{ ...emb([one]), indexingPolicy: { vectorIndexes: [{ path: "/w", type: "flat" }] } }, "not in the container's vectorEmbeddingPolicy"],
      [{ ...emb([{ ...one, dimensions: 600 }]), indexingPolicy: { vectorIndexes: [{ path: "/v", type: "flat" }] } }, "at most 505"],
      [{ ...emb([one]), indexingPolicy: { vectorIndexes: [{ path: "/v", type: "hnsw" }] } }, "flat, quantizedFlat or diskANN"],
      [{ ...emb([one]), indexingPolicy: { vectorIndexes: [{ path: "/v", type: "diskANN", indexingSearchListSize: 5 }] } }, "indexingSearchListSize"],
    ]) {
      await expectCosmosError(database.containers.create(body), 400, { messageIncludes: text });
    }
    const { container, resource } = await database.containers.create(emb([one]));
    assert.deepEqual(resource.vectorEmbeddingPolicy.vectorEmbeddings[0].path, "/v");
    await expectCosmosError(
      container.replace({ ...resource, vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...one, dimensions: 16 }] } }),
      400,
      { messageIncludes: "cannot be changed" },
    );
  });
});
