// The query language through @azure/cosmos, both ways the SDK runs a
// query: sent straight to the server (the default), and through the query
// plan (forceQueryPlan), where the SDK rewrites ORDER BY, aggregates,
// DISTINCT, GROUP BY and OFFSET/LIMIT and merges the pages itself. Both
// must give the same answers, page by page or all at once, on a container
// of one range and on one of four, where the SDK fans the query out over
// the ranges and merges their pages.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { startEbb } from "../lib/server.js";
import { newClient, uniqueId } from "../lib/cosmos.js";

let server;
let client;
let container;
let fourRanges;

const people = [
  { id: "1", pk: "a", name: "ada", age: 36, city: "london", tags: ["math", "code"] },
  { id: "2", pk: "a", name: "bob", age: 25, city: "paris", tags: ["art"] },
  { id: "3", pk: "b", name: "cy", age: 41, city: "london", tags: [] },
  { id: "4", pk: "b", name: "dee", age: 25, city: "rome", tags: ["code", "food"] },
  { id: "5", pk: "c", name: "eve", age: 52, city: "paris" },
  { id: "6", pk: "c", name: "fay", age: 19, city: "london", tags: ["math"] },
];

before(async () => {
  server = await startEbb();
  client = newClient(server.endpoint);
  const { database } = await client.databases.create({ id: uniqueId("db-query") });
  ({ container } = await database.containers.create({ id: "people", partitionKey: { paths: ["/pk"] } }));
  // Every person a logical partition of their own, so that the people
  // are spread over the four ranges.
  ({ container: fourRanges } = await database.containers.create(
    { id: "people-4", partitionKey: { paths: ["/pk"], version: 2 } },
    { initialHeaders: { "x-ebb-partition-count": "4" } },
  ));
  for (const p of people) {
    await container.items.create(p);
    await fourRanges.items.create({ ...p, pk: p.name });
  }
  const ranges = new Set();
  for (const p of people) {
    const { headers } = await fourRanges.item(p.id, p.name).read();
    ranges.add(headers["x-ms-session-token"].split(":")[0]); // <range id>:<token>
  }
  assert.ok(ranges.size > 1, `the people are all in range ${[...ranges]}`);
});

after(async () => {
  client?.dispose();
  await server?.stop();
});

const cases = [
  { q: "SELECT VALUE c.name FROM c ORDER BY c.age DESC, c.name", want: ["eve", "cy", "ada", "bob", "dee", "fay"] },
  { q: "SELECT TOP 2 VALUE c.name FROM c ORDER BY c.age", want: ["fay", "bob"] },
  { q: "SELECT VALUE c.name FROM c ORDER BY c.name OFFSET 2 LIMIT 3", want: ["cy", "dee", "eve"] },
  { q: "SELECT VALUE COUNT(1) FROM c", want: [6] },
  { q: "SELECT VALUE SUM(c.age) FROM c WHERE c.city = 'london'", want: [96] },
  { q: "SELECT VALUE MAX(c.age) FROM c", want: [52] },
  { q: "SELECT VALUE AVG(c.age) FROM c WHERE c.age < 30", want: [23] },
  { q: "SELECT DISTINCT VALUE c.city FROM c ORDER BY c.city", want: ["london", "paris", "rome"] },
  { q: "SELECT c.city, COUNT(1) AS n FROM c GROUP BY c.city", want: [{ city: "london", n: 3 }, { city: "paris", n: 2 }, { city: "rome", n: 1 }], unordered: true },
  { q: "SELECT VALUE t FROM c JOIN t IN c.tags WHERE t = 'code'", want: ["code", "code"] },
  { q: "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'math') AND c.age > @min", params: [{ name: "@min", value: 20 }], want: ["1"] },
  {
    // A filter a client builds from a long list parses flat; the query
    // plan's rewrite of it, which the SDK sends back, must too.
    title: "ORDER BY with 152 ORs",
    q: `SELECT VALUE c.name FROM c WHERE ${["ada", ...Array.from({ length: 150 }, (_, i) => `nobody${i}`), "cy"].map((n) => `c.name = '${n}'`).join(" OR ")} ORDER BY c.name`,
    want: ["ada", "cy"],
  },
];

const key = (v) => JSON.stringify(v);

for (const [where, target] of [["one range", () => container], ["four ranges", () => fourRanges]]) {
  for (const forceQueryPlan of [false, true]) {
    describe(`${where}, ${forceQueryPlan ? "through the query plan" : "sent to the server"}`, () => {
      for (const c of cases) {
        test(c.title ?? c.q, async () => {
          const spec = { query: c.q, parameters: c.params ?? [] };
          const { resources } = await target().items.query(spec, { forceQueryPlan }).fetchAll();
          const got = c.unordered ? [...resources].sort((a, b) => key(a).localeCompare(key(b))) : resources;
          const want = c.unordered ? [...c.want].sort((a, b) => key(a).localeCompare(key(b))) : c.want;
          assert.deepEqual(got, want);
        });
      }

      test("fetchNext pages ORDER BY results two at a time, in order", async () => {
        const it = target().items.query("SELECT VALUE c.name FROM c ORDER BY c.name", { forceQueryPlan, maxItemCount: 2 });
        const seen = [];
        while (it.hasMoreResults()) {
          const { resources } = await it.fetchNext();
          assert.ok(resources.length <= 2, `a page of ${resources.length}`);
          seen.push(...resources);
        }
        assert.deepEqual(seen, ["ada", "bob", "cy", "dee", "eve", "fay"]);
      });
    });
  }
}

test("a syntax error is a 400 that names the problem and where", async () => {
  await assert.rejects(container.items.query("SELECT * FORM c").fetchAll(), (err) => {
    assert.equal(err.code, 400);
    assert.match(err.message, /line 1, column \d+/);
    return true;
  });
});

describe("ORDER BY read in order from the indexes", () => {
  let indexed;
  let indexed4; // the same on four ranges, a person to a logical partition
  const everyone = [...people, { id: "7", pk: "a", name: "gus" }, { id: "8", pk: "b", name: "hal", city: "oslo" }];
  before(async () => {
    const { database } = await client.databases.create({ id: uniqueId("db-orderby") });
    const indexingPolicy = {
      compositeIndexes: [[{ path: "/city", order: "ascending" }, { path: "/age", order: "descending" }]],
    };
    ({ container: indexed } = await database.containers.create({ id: "indexed", partitionKey: { paths: ["/pk"] }, indexingPolicy }));
    ({ container: indexed4 } = await database.containers.create(
      { id: "indexed-4", partitionKey: { paths: ["/pk"], version: 2 }, indexingPolicy },
      { initialHeaders: { "x-ebb-partition-count": "4" } },
    ));
    for (const p of everyone) {
      await indexed.items.create(p);
      await indexed4.items.create({ ...p, pk: p.name });
    }
    const { resource } = await indexed.read();
    assert.deepEqual(resource.indexingPolicy.compositeIndexes[0][1], { path: "/age", order: "descending" });
  });

  // by gives a case's sort key of a person: across ranges, people with
  // equal keys may come in another order (the SDK merges the ranges'
  // ties by range), so there the keys must be in order and the people
  // the same.
  const byAge = (p) => [p.age];
  const byCityAge = (p) => [p.city, p.age];
  // mixed: some rows lack a sort value. @azure/cosmos 4.9.3 refuses to
  // merge such rows across ranges ("Cannot execute cross partition
  // order-by queries on mixed types", whichever server answers:
  // OrderByDocumentProducerComparator.validateOrderByItems), so on four
  // ranges only the other cases run.
  const orderCases = [
    // Items lacking the path come first ascending, last descending.
    { q: "SELECT VALUE c.name FROM c ORDER BY c.age", want: ["gus", "hal", "fay", "bob", "dee", "ada", "cy", "eve"], by: byAge, mixed: true },
    { q: "SELECT VALUE c.name FROM c ORDER BY c.age DESC", want: ["eve", "cy", "ada", "dee", "bob", "fay", "hal", "gus"], by: byAge, mixed: true },
    { q: "SELECT VALUE c.name FROM c WHERE IS_NUMBER(c.age) ORDER BY c.age", want: ["fay", "bob", "dee", "ada", "cy", "eve"], by: byAge },
    // The composite index, forwards and backwards.
    { q: "SELECT VALUE c.name FROM c ORDER BY c.city, c.age DESC", want: ["gus", "cy", "ada", "fay", "hal", "eve", "bob", "dee"], by: byCityAge, mixed: true },
    { q: "SELECT VALUE c.name FROM c ORDER BY c.city DESC, c.age", want: ["dee", "bob", "eve", "hal", "fay", "ada", "cy", "gus"], by: byCityAge, mixed: true },
    {
      q: "SELECT VALUE c.name FROM c WHERE IS_STRING(c.city) AND IS_NUMBER(c.age) ORDER BY c.city DESC, c.age",
      want: ["dee", "bob", "eve", "fay", "ada", "cy"],
      by: byCityAge,
    },
    { q: "SELECT TOP 3 VALUE c.name FROM c WHERE c.age > 20 ORDER BY c.age DESC", want: ["eve", "cy", "ada"], by: byAge },
  ];
  const person = (name) => everyone.find((p) => p.name === name);
  for (const [where, target, exact] of [["", () => indexed, true], [" on four ranges", () => indexed4, false]]) {
    const check = (got, c) => {
      if (exact) return assert.deepEqual(got, c.want);
      assert.deepEqual(got.map((n) => c.by(person(n))), c.want.map((n) => c.by(person(n))), c.q);
      assert.deepEqual([...got].sort(), [...c.want].sort(), c.q);
    };
    for (const forceQueryPlan of [false, true]) {
      for (const c of orderCases.filter((c) => exact || !c.mixed)) {
        test(`${c.q}${forceQueryPlan ? " (query plan)" : ""}${where}, in pages of 3`, async () => {
          const { resources } = await target().items.query(c.q, { forceQueryPlan }).fetchAll();
          check(resources, c);
          const it = target().items.query(c.q, { forceQueryPlan, maxItemCount: 3 });
          const seen = [];
          while (it.hasMoreResults()) {
            const { resources: page } = await it.fetchNext();
            seen.push(...page);
          }
          check(seen, c);
        });
      }
    }
  }

  test("a composite index of one path is a 400 naming the rule", async () => {
    const db = client.database(indexed.database.id);
    await assert.rejects(
      db.containers.create({ id: "bad", partitionKey: { paths: ["/pk"] }, indexingPolicy: { compositeIndexes: [[{ path: "/a" }]] } }),
      (err) => {
        assert.equal(err.code, 400);
        assert.match(err.message, /at least two paths/);
        return true;
      },
    );
  });
});
