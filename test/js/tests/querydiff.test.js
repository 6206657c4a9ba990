// Random queries, answered two ways that must agree. The reference is
// one logical partition queried with its partition key: the SDK sends
// the query as written and Ebb's executor answers all of it. The same
// documents, each in a logical partition of its own and spread over
// four ranges, are then queried across partitions: the SDK asks for the
// query plan, sends each range the plan's rewritten query and merges
// the ranges' pages itself (ORDER BY, TOP, OFFSET LIMIT, aggregates,
// GROUP BY, DISTINCT). The same again under a two-level hierarchical
// key over four ranges, and for one prefix of that key against a
// partition of just its documents. A difference is a wrong plan, a
// wrong rewrite or a range answering its part wrongly.
//
// EBB_QUERYDIFF_SEED picks another seed, EBB_QUERYDIFF_QUERIES another
// number of queries; a failure names the seed and the query.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, openEbb, closeEbb, restRequest } from "../lib/cosmos.js";

const seed = Number(process.env.EBB_QUERYDIFF_SEED ?? 20261126);
const queryCount = Number(process.env.EBB_QUERYDIFF_QUERIES ?? 160);
const docCount = 90;

// mulberry32: a small seeded generator, so a failure can be replayed.
function generator(s) {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = generator(seed);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;

const strings = ["a", "ab", "b", "B", "", "zz", "a b"];

// A value of any kind, for the property whose type varies.
function mixed() {
  switch (int(0, 6)) {
    case 0: return int(-3, 9);
    case 1: return pick(strings);
    case 2: return chance(0.5);
    case 3: return null;
    case 4: return [int(0, 3), pick(strings)];
    case 5: return { x: int(0, 2) };
    default: return int(0, 4) + 0.5;
  }
}

// A primitive of any kind: MIN and MAX are defined over these only.
function primitive() {
  return pick([() => int(-3, 9), () => pick(strings), () => chance(0.5), () => null])();
}

function randomDoc(i) {
  const d = { id: `d${String(i).padStart(3, "0")}`, g: int(0, 3) };
  // n: integers and halves (sums of halves are exact, so AVG agrees to
  // the last bit however the partial sums are grouped), sometimes absent.
  if (chance(0.9)) d.n = chance(0.8) ? int(-5, 20) : int(-5, 20) + 0.5;
  if (chance(0.85)) d.s = pick(strings);
  if (chance(0.7)) d.b = chance(0.5);
  if (chance(0.8)) d.m = mixed();
  if (chance(0.8)) d.p = primitive();
  d.arr = Array.from({ length: int(0, 3) }, () => int(0, 5));
  d.o = { x: int(0, 4), y: pick(strings) };
  if (chance(0.2)) d.o.z = null;
  return d;
}
const docs = Array.from({ length: docCount }, (_, i) => randomDoc(i));

// Predicates over the documents, joined at random.
function atom() {
  return pick([
    () => `c.n > ${int(-5, 20)}`,
    () => `c.n <= ${int(-5, 20)}`,
    () => `c.n = ${int(-5, 20)}`,
    () => `c.s = '${pick(strings)}'`,
    () => `STARTSWITH(c.s, '${pick(["a", "b", "z"])}')`,
    () => `c.s > '${pick(strings)}'`,
    () => `c.b = ${chance(0.5)}`,
    () => `IS_DEFINED(c.m)`,
    () => `IS_NUMBER(c.m)`,
    () => `IS_STRING(c.m)`,
    () => `ARRAY_CONTAINS(c.arr, ${int(0, 5)})`,
    () => `ARRAY_LENGTH(c.arr) >= ${int(0, 3)}`,
    () => `c.o.x >= ${int(0, 4)}`,
    () => `c.g IN (${int(0, 3)}, ${int(0, 3)})`,
    () => `IS_NULL(c.o.z)`,
    () => `c.n > c.o.x`,
  ])();
}
function predicate(depth = 0) {
  if (depth > 1 || chance(0.5)) return atom();
  const op = pick(["AND", "OR", "NOT"]);
  return op === "NOT" ? `NOT (${predicate(depth + 1)})` : `(${predicate(depth + 1)} ${op} ${predicate(depth + 1)})`;
}
const where = (extra) => {
  const parts = [extra, chance(0.7) ? predicate() : ""].filter(Boolean);
  return parts.length ? ` WHERE ${parts.join(" AND ")}` : "";
};

// Each query says how its results compare: ordered (the rows in order),
// unordered (as a multiset), or sized (TOP or OFFSET LIMIT without an
// ORDER BY: any rows of the unlimited query, as many as it allows).
function randomQuery() {
  const dir = () => pick(["", " ASC", " DESC"]);
  switch (int(0, 20)) {
    case 0: { // ORDER BY a number, ties broken by id
      const d = dir();
      return { q: `SELECT VALUE c.id FROM c${where("IS_NUMBER(c.n)")} ORDER BY c.n${d}, c.id${d}`, cmp: "ordered" };
    }
    case 1: { // ORDER BY a string, with TOP
      const d = dir();
      return { q: `SELECT TOP ${int(0, 12)} c.id, c.s FROM c${where("IS_STRING(c.s)")} ORDER BY c.s${d}, c.id${d}`, cmp: "ordered" };
    }
    case 2: { // ORDER BY with OFFSET LIMIT
      const d = dir();
      return { q: `SELECT c.id, c.n FROM c${where("IS_NUMBER(c.n)")} ORDER BY c.n${d}, c.id${d} OFFSET ${int(0, 30)} LIMIT ${int(0, 20)}`, cmp: "ordered" };
    }
    case 3: { // ORDER BY one unique property
      return { q: `SELECT ${pick(["*", "VALUE c.n", "c.o", "VALUE {\"i\": c.id, \"b\": c.b}"])} FROM c${where()} ORDER BY c.id${dir()}`, cmp: "ordered" };
    }
    case 4: // an aggregate over everything the filter passes
      // Not over every kind of value: @azure/cosmos 4.9.3 merges some
      // ranges' partial aggregates wrongly, as it would the service's.
      // Its MaxAggregator throws on a null ("Tried to compare an object
      // type"), its MinAggregator skips a range whose MIN is undefined
      // (an array or object among the values) and its AverageAggregator
      // one whose SUM is (a string among them), where the query's own
      // answer is undefined.
      return { q: `SELECT VALUE ${pick(["COUNT(1)", "COUNT(c.m)", "SUM(c.n)", "AVG(c.n)", "MIN(c.n)", "MAX(c.n)", "MIN(c.p)", "MAX(c.s)", "MIN(c.s)", "SUM(c.m)"])} FROM c${where()}`, cmp: "ordered" };
    case 5: // several aggregates in one object
      return { q: `SELECT COUNT(1) AS cnt, SUM(c.n) AS total, MIN(c.s) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean FROM c${where()}`, cmp: "ordered" };
    case 6: // GROUP BY with aggregates
      return {
        q: `SELECT ${pick(["c.g", "c.b", "c.s", "c.m"])} AS k, COUNT(1) AS cnt, ${pick(["SUM(c.n)", "MAX(c.n)", "MIN(c.s)", "AVG(c.n)", "MIN(c.p)"])} AS v FROM c${where()} GROUP BY ${"" /* same path as k */}`,
        cmp: "unordered",
        groupBy: true,
      };
    case 7: // GROUP BY of a value
      return { q: `SELECT VALUE ${pick(["COUNT(1)", "MAX(c.n)", "SUM(c.n)"])} FROM c${where()} GROUP BY c.g`, cmp: "unordered" };
    case 8: // DISTINCT, unordered
      return { q: `SELECT DISTINCT ${pick(["VALUE c.s", "VALUE c.m", "c.s, c.b", "VALUE c.o.x", "VALUE ARRAY_LENGTH(c.arr)"])} FROM c${where()}`, cmp: "unordered" };
    case 9: { // DISTINCT with ORDER BY
      return { q: `SELECT DISTINCT VALUE c.n FROM c${where("IS_NUMBER(c.n)")} ORDER BY c.n${dir()}`, cmp: "ordered" };
    }
    case 10: // a projection, unordered
      return { q: `SELECT c.id, c.o.x AS x, c.m FROM c${where()}`, cmp: "unordered" };
    case 11: // JOIN
      return { q: `SELECT VALUE {"id": c.id, "a": a} FROM c JOIN a IN c.arr${where(`a >= ${int(0, 5)}`)}`, cmp: "unordered" };
    case 12: // TOP or OFFSET LIMIT without an order: only the count is fixed
      return chance(0.5)
        ? { q: `SELECT TOP ${int(0, 15)} VALUE c.id FROM c${where()}`, cmp: "sized" }
        : { q: `SELECT VALUE c.id FROM c${where()} OFFSET ${int(0, 20)} LIMIT ${int(0, 15)}`, cmp: "sized" };
    case 13: // TOP over an aggregate
      return { q: `SELECT TOP ${int(1, 3)} VALUE COUNT(1) FROM c${where()}`, cmp: "ordered" };
    case 14: // GROUP BY two keys, or an expression
      return chance(0.5)
        ? { q: `SELECT c.g, c.b, COUNT(1) AS cnt, MIN(c.n) AS lo FROM c${where()} GROUP BY c.g, c.b`, cmp: "unordered" }
        : { q: `SELECT LOWER(c.s) AS k, SUM(c.o.x) AS x FROM c${where("IS_STRING(c.s)")} GROUP BY LOWER(c.s)`, cmp: "unordered" };
    case 15: // aggregates over a JOIN
      return { q: `SELECT VALUE ${pick(["COUNT(1)", "SUM(a)", "MAX(a)", "AVG(a)"])} FROM c JOIN a IN c.arr${where()}`, cmp: "ordered" };
    case 16: { // ORDER BY a nested path
      const d = dir();
      return { q: `SELECT c.id, c.o FROM c${where()} ORDER BY c.o.x${d}, c.id${d}`, cmp: "ordered" };
    }
    case 17: // GROUP BY or DISTINCT with a limit: which groups is not fixed
      return chance(0.5)
        ? { q: `SELECT c.g, COUNT(1) AS cnt FROM c${where()} GROUP BY c.g OFFSET ${int(0, 3)} LIMIT ${int(0, 3)}`, cmp: "sized" }
        : { q: `SELECT DISTINCT TOP ${int(0, 5)} VALUE c.o.x + 1 FROM c${where()}`, cmp: "sized" };
    case 18: // subqueries
      return { q: `SELECT c.id, ARRAY(SELECT VALUE a FROM a IN c.arr WHERE a > 1) AS big FROM c${where(`EXISTS(SELECT VALUE a FROM a IN c.arr WHERE a = ${int(0, 5)})`)}`, cmp: "unordered" };
    case 20: // MAKELIST and MAKESET: arrays whose order is not fixed
      return { q: `SELECT VALUE ${pick(["MAKELIST(c.o.x)", "MAKESET(c.s)", "MAKESET(c.g)"])} FROM c${where()}`, cmp: "array" };
    default: // parameters in the filter, TOP and ORDER BY
      return {
        q: `SELECT TOP @top VALUE c.id FROM c WHERE c.n >= @lo ORDER BY c.n DESC, c.id DESC`,
        params: [{ name: "@top", value: int(0, 10) }, { name: "@lo", value: int(-5, 20) }],
        cmp: "ordered",
      };
  }
}

// GROUP BY's query names its key twice; fill in the second.
function finish(c) {
  if (c.groupBy) c.q += c.q.match(/^SELECT (c\.\w+) AS k/)[1];
  return c;
}
const queries = Array.from({ length: queryCount }, () => finish(randomQuery()));

const key = (v) => JSON.stringify(v) ?? "undefined";
const sorted = (rows) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
const stripSystem = (rows) =>
  rows.map((r) => {
    if (r === null || typeof r !== "object" || Array.isArray(r)) return r;
    const { _rid, _self, _etag, _attachments, _ts, pk, t, u, ...rest } = r;
    return rest;
  });

// The query as a whole without its TOP or OFFSET LIMIT: what a sized
// query's rows must come from.
function unlimited(q) {
  return q.replace(/^SELECT (DISTINCT )?TOP \d+ /, "SELECT $1").replace(/ OFFSET \d+ LIMIT \d+$/, "");
}
function sizeOf(q, total) {
  const top = q.match(/^SELECT (?:DISTINCT )?TOP (\d+) /);
  if (top) return Math.min(Number(top[1]), total);
  const [, offset, limit] = q.match(/ OFFSET (\d+) LIMIT (\d+)$/).map(Number);
  return Math.max(0, Math.min(limit, total - offset));
}

let server;
let client;
let database;
let reference;
let spread;
let hierarchical; // the same documents under a two-level key, over four ranges
let prefixReference; // the documents whose first level is t3, in one partition
const indexingPolicy = {
  compositeIndexes: [
    [{ path: "/n", order: "ascending" }, { path: "/id", order: "ascending" }],
    [{ path: "/n", order: "descending" }, { path: "/id", order: "descending" }],
    [{ path: "/s", order: "ascending" }, { path: "/id", order: "ascending" }],
    [{ path: "/s", order: "descending" }, { path: "/id", order: "descending" }],
    [{ path: "/o/x", order: "ascending" }, { path: "/id", order: "ascending" }],
    [{ path: "/o/x", order: "descending" }, { path: "/id", order: "descending" }],
  ],
};

before(async () => {
  ({ server, client, database } = await openEbb("db-querydiff"));
  ({ container: reference } = await database.containers.create({ id: uniqueId("one"), partitionKey: { paths: ["/pk"], version: 2 }, indexingPolicy }));
  ({ container: spread } = await database.containers.create(
    { id: uniqueId("four"), partitionKey: { paths: ["/pk"], version: 2 }, indexingPolicy },
    { initialHeaders: { "x-ebb-partition-count": "4" } },
  ));
  ({ container: prefixReference } = await database.containers.create({ id: uniqueId("t3"), partitionKey: { paths: ["/pk"], version: 2 }, indexingPolicy }));
  ({ container: hierarchical } = await database.containers.create(
    { id: uniqueId("four-hpk"), partitionKey: { paths: ["/t", "/u"], kind: "MultiHash", version: 2 }, indexingPolicy },
    { initialHeaders: { "x-ebb-partition-count": "4" } },
  ));
  for (const [i, d] of docs.entries()) {
    await reference.items.create({ ...d, pk: "all" });
    await spread.items.create({ ...d, pk: d.id });
    await hierarchical.items.create({ ...d, t: `t${i % 7}`, u: d.id });
    if (i % 7 === 3) await prefixReference.items.create({ ...d, pk: "all" });
  }
});
after(() => closeEbb({ server, client }));

async function run(container, q, params, options) {
  const { resources } = await container.items.query({ query: q, parameters: params }, options).fetchAll();
  return stripSystem(resources);
}

// What @azure/cosmos 4.9.3 makes of a query's rows across ranges, where
// it differs from the query's own result, as it does against the
// service: DISTINCT drops every falsy row (0, "", false, null: its
// Ordered and UnorderedDistinctEndpointComponent keep a row only "if
// (item)"),
// an ORDER BY of a VALUE that some rows lack yields undefined for them
// (OrderByEndpointComponent pushes each row's payload, present or not),
// and the GROUP BY merge sets an aggregate of nothing to undefined
// instead of leaving the property out.
function asTheSDKMerges(c, rows) {
  let out = rows;
  if (/^SELECT DISTINCT /.test(c.q)) out = out.filter(Boolean);
  return out;
}
function normalize(rows) {
  return rows
    .filter((r) => r !== undefined)
    .map((r) => (r !== null && typeof r === "object" && !Array.isArray(r) ? JSON.parse(JSON.stringify(r)) : r));
}

describe(`random queries agree across four ranges and in one partition (seed ${seed})`, () => {
  for (const [i, c] of queries.entries()) {
    test(`${i}: ${c.q}`, async () => {
      const all = await run(reference, c.cmp === "sized" ? unlimited(c.q) : c.q, c.params ?? [], { partitionKey: "all" });
      const want = asTheSDKMerges(c, all);
      const runs = [
        [spread, {}],
        [spread, { forceQueryPlan: true }],
        [spread, { forceQueryPlan: true, maxItemCount: 3 }],
        [hierarchical, { maxItemCount: 5 }],
      ];
      for (const [container, options] of runs) {
        const how = `seed ${seed}, ${container === hierarchical ? "hierarchical key, " : ""}options ${JSON.stringify(options)}`;
        const got = normalize(await run(container, c.q, c.params ?? [], { ...options }));
        switch (c.cmp) {
          case "ordered":
            assert.deepEqual(got, want, how);
            break;
          case "unordered":
            assert.deepEqual(sorted(got), sorted(want), how);
            break;
          case "array":
            assert.deepEqual(got.map(sorted), want.map(sorted), how);
            break;
          case "sized": {
            assert.equal(got.length, sizeOf(c.q, want.length), `${how}: ${key(got)} of ${key(want)}`);
            const rows = new Set(want.map(key));
            assert.equal(new Set(got.map(key)).size, got.length, `${how}: a row twice in ${key(got)}`);
            for (const row of got) assert.ok(rows.has(key(row)), `${how}: ${key(row)} is not a row of the query`);
            break;
          }
        }
      }
      // A prefix of the hierarchical key: the SDK queries the range that
      // holds its part of the key space (Ebb never splits a range
      // within one first level), as written, so Ebb's own answer
      // comes back.
      if (c.cmp !== "sized") {
        const inPrefix = await run(prefixReference, c.q, c.params ?? [], { partitionKey: "all" });
        const got = normalize(await run(hierarchical, c.q, c.params ?? [], { partitionKey: ["t3"], maxItemCount: 4 }));
        const how = `seed ${seed}, partition key prefix ["t3"]`;
        if (c.cmp === "ordered") assert.deepEqual(got, inPrefix, how);
        else if (c.cmp === "array") assert.deepEqual(got.map(sorted), inPrefix.map(sorted), how);
        else assert.deepEqual(sorted(got), sorted(inPrefix), how);
      }
    });
  }
});

// The same queries resumed page by page, each page from a new iterator
// given the last page's continuation token (enableQueryControl, which
// gives one for cross-partition queries), as a stateless service pages
// a query for its own clients. An ORDER BY resumes by sending every
// range the rewritten query with a filter on the last row's sort values
// and the range it stopped in its own token: the range must take its
// token with the changed filter.
//
// Not with ORDER BY on two keys: @azure/cosmos 4.9.3 filters each key
// on its own (c.n <= 3 AND c.id <= 'd7', in OrderByQueryRangeStrategy),
// which loses rows of the other ranges against the service as well.
describe(`random queries resumed from continuation tokens (seed ${seed})`, () => {
  const resumable = queries.filter(
    (c) => c.cmp !== "sized" && !/COUNT|SUM|AVG|MIN|MAX|MAKE|GROUP BY|DISTINCT|ORDER BY [^,]*,/.test(c.q),
  );
  for (const [i, c] of resumable.entries()) {
    test(`${i}: ${c.q}`, async () => {
      const want = await run(reference, c.q, c.params ?? [], { partitionKey: "all" });
      for (const container of [spread, hierarchical]) {
        const got = [];
        let continuationToken;
        for (let pages = 0; ; pages++) {
          assert.ok(pages <= want.length + 8, `still paging after ${pages} pages`);
          const it = container.items.query({ query: c.q, parameters: c.params ?? [] }, { maxItemCount: 4, continuationToken, enableQueryControl: true });
          const page = await it.fetchNext();
          got.push(...stripSystem(page.resources));
          continuationToken = page.continuationToken;
          if (!continuationToken) break;
        }
        const rows = normalize(got);
        const how = `seed ${seed}${container === hierarchical ? ", hierarchical key" : ""}`;
        if (c.cmp === "ordered") assert.deepEqual(rows, want, how);
        else assert.deepEqual(sorted(rows), sorted(want), how);
      }
    });
  }
});

// A count of distinct values, COUNT over a DISTINCT subquery: Ebb's
// executor answers it in a partition, and across partitions its plan is
// the service's (dCountInfo, the inner query per range, made distinct
// across them). @azure/cosmos 4.9.3 does not read dCountInfo and so
// answers the distinct values themselves across partitions, as it does
// against the service; the .NET and Java SDKs count them.
describe("a count of distinct values", () => {
  const q = "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.o.x FROM c WHERE c.o.x > 0) AS x";
  test("in a partition", async () => {
    const values = new Set(docs.map((d) => d.o.x).filter((x) => x > 0));
    assert.deepEqual(await run(reference, q, [], { partitionKey: "all" }), [values.size]);
    const named = "SELECT COUNT(1) AS n FROM (SELECT DISTINCT c.o.x FROM c)";
    assert.deepEqual(await run(reference, named, [], { partitionKey: "all" }), [{ n: new Set(docs.map((d) => d.o.x)).size }]);
  });
  test("across partitions, through the query plan", async () => {
    const values = [...new Set(docs.map((d) => d.o.x).filter((x) => x > 0))].sort();
    const got = await run(spread, q, [], {});
    assert.deepEqual([...got].sort(), values);
    const plan = await queryPlan(spread, q);
    assert.deepEqual(plan.queryInfo.dCountInfo, { dCountAlias: "" });
    assert.equal(plan.queryInfo.distinctType, "Unordered");
    assert.equal(plan.queryInfo.rewrittenQuery, "SELECT DISTINCT VALUE c.o.x FROM c WHERE c.o.x > 0");
  });
});

// queryPlan asks for a query's plan as the SDKs do.
async function queryPlan(container, query) {
  const res = await restRequest(server.endpoint, {
    method: "POST",
    path: `/dbs/${encodeURIComponent(database.id)}/colls/${encodeURIComponent(container.id)}/docs`,
    rawBody: JSON.stringify({ query }),
    headers: {
      "content-type": "application/query+json",
      "x-ms-documentdb-query": "True",
      "x-ms-cosmos-is-query-plan-request": "True",
      "x-ms-cosmos-supported-query-features": "Aggregate, Distinct, OrderBy, Top, OffsetAndLimit, GroupBy",
    },
  });
  assert.equal(res.status, 200, res.text);
  return res.json;
}
