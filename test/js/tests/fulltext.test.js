// Full-text search through @azure/cosmos: the fullTextPolicy and
// fullTextIndexes as the service validates them, FullTextContains with
// the English analyzer (stop words, stemming), and ORDER BY RANK
// FullTextScore against a BM25 oracle computed here, with expired items
// left out of the statistics.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, advanceClock, openEbb, closeEbb, expectCosmosError } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-text")));
after(() => closeEbb({ server, client }));

const textPolicy = {
  partitionKey: { paths: ["/pk"] },
  fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] },
  indexingPolicy: { fullTextIndexes: [{ path: "/text" }] },
};

/** BM25 (k1 1.2, b 0.75) of each document for terms, over docs. */
function bm25(docs, terms) {
  const words = docs.map((d) => d.text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
  const avg = words.reduce((s, w) => s + w.length, 0) / docs.length;
  return docs.map((d, i) => {
    let score = 0;
    for (const t of terms) {
      const tf = words[i].filter((w) => w === t).length;
      if (!tf) continue;
      const n = words.filter((w) => w.includes(t)).length;
      const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * words[i].length) / avg));
    }
    return { id: d.id, score };
  });
}

const byScore = (scored) => [...scored].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).map((s) => s.id);

describe("full-text search", () => {
  test("FullTextContains matches words as the English analyzer sees them", async () => {
    const { container } = await database.containers.create({ id: uniqueId("t"), ...textPolicy });
    await container.items.create({ id: "a", pk: "p", text: "The fox was running quickly" });
    await container.items.create({ id: "b", pk: "p", text: "Dogs sleep" });
    const ids = async (where) =>
      (await container.items.query(`SELECT VALUE c.id FROM c WHERE ${where}`, { partitionKey: "p" }).fetchAll()).resources.sort();
    assert.deepEqual(await ids("FullTextContains(c.text, 'runs')"), ["a"]);
    assert.deepEqual(await ids("FullTextContains(c.text, 'dog')"), ["b"]);
    assert.deepEqual(await ids("FullTextContainsAll(c.text, 'fox', 'run')"), ["a"]);
    assert.deepEqual(await ids("FullTextContainsAny(c.text, 'sleeping', 'foxes')"), ["a", "b"]);
  });

  test("ORDER BY RANK FullTextScore ranks by BM25 over the visible items, in a partition and across partitions", async () => {
    const { container } = await database.containers.create({ id: uniqueId("t"), ...textPolicy, defaultTtl: -1 });
    const live = [
      { id: "a", pk: "p", text: "alpha alpha gamma gamma gamma" },
      { id: "b", pk: "q", text: "beta gamma" },
      { id: "c", pk: "p", text: "alpha beta delta" },
      { id: "d", pk: "q", text: "delta delta delta" },
    ];
    for (const d of live) await container.items.create(d);
    // Items that expire: were they counted, alpha would be common and
    // rank lower.
    const expiring = Array.from({ length: 6 }, (_, i) => ({ id: `x${i}`, pk: "p", ttl: 5, text: "alpha delta" }));
    for (const d of expiring) await container.items.create(d);
    await advanceClock(server.endpoint, 6);
    const terms = ["alpha", "beta"];
    const want = byScore(bm25(live, terms)).slice(0, 3);
    assert.notDeepEqual(byScore(bm25([...live, ...expiring], terms)).slice(0, 3), want, "the corpus must tell the two apart");

    const query = "SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, 'alpha', 'beta')";
    const { resources: across } = await container.items.query(query).fetchAll();
    assert.deepEqual(across, want);
    const { resources: inP } = await container.items.query(query, { partitionKey: "p" }).fetchAll();
    assert.deepEqual(inP, want.filter((id) => live.find((d) => d.id === id).pk === "p"));
    // Projecting an object, the SDK runs the ranking itself from the
    // plan's hybrid-search section: the container's statistics from the
    // global statistics query, then the component query.
    const { resources: hybrid } = await container.items
      .query("SELECT TOP 3 c.id, c.text FROM c ORDER BY RANK FullTextScore(c.text, 'alpha', 'beta')")
      .fetchAll();
    assert.deepEqual(hybrid.map((r) => r.id), want);
    assert.deepEqual(hybrid[0], { id: want[0], text: live.find((d) => d.id === want[0]).text });
  });

  test("ORDER BY RANK RRF fuses a full-text and a vector ranking", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("t"),
      ...textPolicy,
      vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 2 }] },
    });
    const docs = [
      { id: "a", pk: "p", text: "alpha", v: [0, 1] },
      { id: "b", pk: "q", text: "alpha alpha beta", v: [1, 0] },
      { id: "c", pk: "p", text: "beta", v: [0.9, 0.1] },
      { id: "d", pk: "q", text: "gamma alpha", v: [0.5, 0.5] },
    ];
    for (const d of docs) await container.items.create(d);
    const q = [1, 0];
    const textRank = byScore(bm25(docs, ["alpha"]));
    const cos = (v) => (v[0] * q[0] + v[1] * q[1]) / Math.hypot(...v);
    const vectorRank = [...docs].sort((x, y) => cos(y.v) - cos(x.v)).map((d) => d.id);
    const fused = docs
      .map((d) => ({ id: d.id, score: 1 / (61 + textRank.indexOf(d.id)) + 2 / (61 + vectorRank.indexOf(d.id)) }))
      .sort((x, y) => y.score - x.score)
      .map((x) => x.id);
    const { resources } = await container.items
      .query({ query: "SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'alpha'), VectorDistance(c.v, @q), [1, 2])", parameters: [{ name: "@q", value: q }] })
      .fetchAll();
    assert.deepEqual(resources, fused.slice(0, 3));
    const { resources: hybrid } = await container.items
      .query({ query: "SELECT TOP 3 * FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'alpha'), VectorDistance(c.v, @q), [1, 2])", parameters: [{ name: "@q", value: q }] })
      .fetchAll();
    assert.deepEqual(hybrid.map((r) => r.id), fused.slice(0, 3), "through the plan's hybrid-search section");
    assert.deepEqual(hybrid[0].v, docs.find((d) => d.id === fused[0]).v);
  });

  test("the service's rules and the policies' validation", async () => {
    const { container } = await database.containers.create({ id: uniqueId("t"), ...textPolicy });
    await expectCosmosError(container.items.query("SELECT FullTextScore(c.text, 'a') AS s FROM c", { partitionKey: "p" }).fetchAll(), 400, {
      messageIncludes: "FullTextScore can only be used in ORDER BY RANK",
    });
    await expectCosmosError(container.items.query("SELECT RRF(FullTextScore(c.text, 'a'), FullTextScore(c.text, 'b')) AS r FROM c", { partitionKey: "p" }).fetchAll(), 400, {
      messageIncludes: "RRF can only be used in ORDER BY RANK",
    });
    const base = { partitionKey: { paths: ["/pk"] } };
    await expectCosmosError(database.containers.create({ ...base, id: uniqueId("t"), fullTextPolicy: { defaultLanguage: "fr-FR", fullTextPaths: [{ path: "/text" }] } }), 400, {
      messageIncludes: "fr-FR",
    });
    await expectCosmosError(database.containers.create({ ...base, id: uniqueId("t"), ...textPolicy, indexingPolicy: { fullTextIndexes: [{ path: "/other" }] } }), 400, {
      messageIncludes: "not in the container's fullTextPolicy",
    });
  });
});
