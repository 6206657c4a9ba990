// Computed properties through @azure/cosmos, which sends and reads a
// container's computedProperties: the SDK's own cases (its
// computedProperties.spec.ts: none, every one unindexed or indexed under
// an indexing policy that includes or excludes "/*", replaced, dropped),
// each query clause both ways the SDK runs a query, the index serving
// them when the policy names their path, SELECT * and point reads without
// them, replaces while the index rebuilds, and the definitions refused.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { startEbb } from "../lib/server.js";
import { newClient, uniqueId, expectCosmosError, advanceClock } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => {
  server = await startEbb();
  client = newClient(server.endpoint);
  ({ database } = await client.databases.create({ id: uniqueId("db-computed") }));
});

after(async () => {
  client?.dispose();
  await server?.stop();
});

const lowerName = {
  name: "lowerLastName",
  query: "SELECT VALUE LOWER(IS_DEFINED(c.lastName) ? c.lastName : c.parents[0].familyName) FROM c",
};
const parentsFullName = {
  name: "parentsFullName",
  query:
    "SELECT VALUE CONCAT(CONCAT(c.parents[0].firstName, ' ', c.lastName), ' & ', CONCAT(c.parents[1].firstName, ' ', c.lastName)) FROM c",
};
const families = [
  { id: "AndersenFamily", lastName: "Andersen", parents: [{ firstName: "Thomas" }, { firstName: "Mary Kay" }] },
  {
    id: "WakefieldFamily",
    parents: [
      { familyName: "Wakefield", givenName: "Robin" },
      { familyName: "Miller", givenName: "Ben" },
    ],
  },
];
const selectBoth = "SELECT c.lowerLastName, c.parentsFullName FROM c";
const bothResult = [{ lowerLastName: "andersen", parentsFullName: "Thomas Andersen & Mary Kay Andersen" }, { lowerLastName: "wakefield" }];

async function createContainer(computedProperties, indexingPolicy, items = families) {
  const { container } = await database.containers.create({
    id: uniqueId("c"),
    partitionKey: { paths: ["/id"] },
    computedProperties,
    indexingPolicy,
  });
  for (const it of items) {
    await container.items.create(it);
  }
  return container;
}

const all = async (container, query, options = {}) => (await container.items.query(query, options).fetchAll()).resources;

// The pages of a query and whether an index served each.
async function pagesOf(container, query, options = {}) {
  const it = container.items.query(query, { populateIndexMetrics: true, maxItemCount: 2, ...options });
  const rows = [];
  let indexed = true;
  while (it.hasMoreResults()) {
    const page = await it.fetchNext();
    rows.push(...page.resources);
    if (page.resources.length > 0 && !String(page.indexMetrics).includes('"UtilizedSingleIndexes":[{')) {
      indexed = false;
    }
  }
  return { rows, indexed };
}

describe("the SDK's cases", () => {
  const include = (...names) => ({ includedPaths: [...names.map((n) => ({ path: `/${n}/*` })), { path: "/*" }] });
  const variations = [
    ["none", [], undefined, [{}, {}]],
    ["all, not indexed", [lowerName, parentsFullName], undefined, bothResult],
    [
      "all, indexed, /* excluded",
      [lowerName, parentsFullName],
      { includedPaths: [{ path: "/lowerLastName/*" }, { path: "/parentsFullName/*" }], excludedPaths: [{ path: "/*" }] },
      bothResult,
    ],
    ["all, indexed, /* included", [lowerName, parentsFullName], include("lowerLastName", "parentsFullName"), bothResult],
    ["all, not indexed, /* excluded", [lowerName, parentsFullName], { excludedPaths: [{ path: "/*" }] }, bothResult],
    ["all, not indexed, /* included", [lowerName, parentsFullName], { includedPaths: [{ path: "/*" }] }, bothResult],
  ];
  for (const [name, cps, policy, want] of variations) {
    test(name, async () => {
      const container = await createContainer(cps, policy);
      assert.deepEqual(await all(container, selectBoth), want);
      const { resource } = await container.read();
      assert.deepEqual(resource.computedProperties, cps);
    });
  }

  test("replaced with another one", async () => {
    const container = await createContainer([lowerName], { includedPaths: [{ path: "/*" }] });
    assert.deepEqual(await all(container, selectBoth), [{ lowerLastName: "andersen" }, { lowerLastName: "wakefield" }]);
    const { resource: def } = await container.read();
    def.computedProperties = [parentsFullName];
    await container.replace(def);
    assert.deepEqual(await all(container, selectBoth), [{ parentsFullName: "Thomas Andersen & Mary Kay Andersen" }, {}]);
  });

  test("dropped", async () => {
    const container = await createContainer([lowerName], { includedPaths: [{ path: "/*" }] });
    const { resource: def } = await container.read();
    def.computedProperties = [];
    await container.replace(def);
    assert.deepEqual(await all(container, selectBoth), [{}, {}]);
  });
});

describe("queries", () => {
  let container;
  const cps = [
    { name: "cp_lowerName", query: "SELECT VALUE LOWER(c.name) FROM c" },
    { name: "cp_20PercentDiscount", query: "SELECT VALUE (c.price * 0.2) FROM c" },
    { name: "cp_primaryCategory", query: "SELECT VALUE SUBSTRING(c.categoryName, 0, INDEX_OF(c.categoryName, ',')) FROM c" },
  ];
  const products = [
    { id: "1", name: "Touring-1000", price: 2000, categoryName: "Bikes, Touring Bikes" },
    { id: "2", name: "ROAD-150", price: 1500, categoryName: "Bikes, Road Bikes" },
    { id: "3", name: "Chain", price: 20, categoryName: "Components, Chains" },
    { id: "4", name: "wheel", price: 150, categoryName: "Components, Wheels" },
    { id: "5", price: 10, categoryName: "Accessories, Bottles" },
  ];
  before(async () => {
    container = await createContainer(cps, { includedPaths: [{ path: "/*" }, { path: "/cp_lowerName/?" }] }, products);
  });

  for (const forceQueryPlan of [false, true]) {
    describe(forceQueryPlan ? "through the query plan" : "sent to the server", () => {
      const opts = { forceQueryPlan };
      test("projection", async () => {
        assert.deepEqual(await all(container, "SELECT c.price - c.cp_20PercentDiscount AS discountedPrice, c.cp_lowerName FROM c WHERE c.id = '4'", opts), [
          { discountedPrice: 120, cp_lowerName: "wheel" },
        ]);
      });
      test("WHERE", async () => {
        const rows = await all(container, "SELECT VALUE c.id FROM c WHERE c.cp_20PercentDiscount < 50.00", opts);
        assert.deepEqual(rows.sort(), ["3", "4", "5"]);
      });
      test("ORDER BY", async () => {
        assert.deepEqual(await all(container, "SELECT VALUE c.id FROM c ORDER BY c.cp_lowerName", opts), ["5", "3", "2", "1", "4"]);
      });
      test("GROUP BY", async () => {
        const rows = await all(container, "SELECT COUNT(1) AS n, c.cp_primaryCategory FROM c GROUP BY c.cp_primaryCategory", opts);
        rows.sort((a, b) => a.cp_primaryCategory.localeCompare(b.cp_primaryCategory));
        assert.deepEqual(rows, [
          { n: 1, cp_primaryCategory: "Accessories" },
          { n: 2, cp_primaryCategory: "Bikes" },
          { n: 2, cp_primaryCategory: "Components" },
        ]);
      });
      test("SELECT * returns the items as stored", async () => {
        const rows = await all(container, "SELECT * FROM c WHERE c.cp_lowerName = 'chain'", opts);
        assert.equal(rows.length, 1);
        assert.equal(rows[0].cp_lowerName, undefined);
        assert.equal(rows[0].name, "Chain");
      });
    });
  }

  test("a point read returns the item as stored", async () => {
    const { resource } = await container.item("1", "1").read();
    assert.equal(resource.cp_lowerName, undefined);
    assert.equal(resource.name, "Touring-1000");
  });

  test("the index serves the indexed one, a scan the others", async () => {
    let r = await pagesOf(container, "SELECT VALUE c.id FROM c WHERE c.cp_lowerName = 'road-150'");
    assert.deepEqual(r, { rows: ["2"], indexed: true });
    r = await pagesOf(container, "SELECT VALUE c.id FROM c WHERE c.cp_primaryCategory = 'Bikes'");
    assert.deepEqual(r.rows.sort(), ["1", "2"]);
    assert.equal(r.indexed, false);
    r = await pagesOf(container, "SELECT VALUE c.id FROM c ORDER BY c.cp_lowerName DESC");
    assert.deepEqual(r, { rows: ["4", "1", "2", "3", "5"], indexed: true });
  });
});

describe("replaces", () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ id: `i${String(i).padStart(2, "0")}`, name: `Name-${i}`, cat: ["x", "y", "z"][i % 3] }));
  const ids = (pred) => items.filter((_, i) => pred(i)).map((it) => it.id);

  test("adding and redefining an indexed one: right at once, indexed once rebuilt", async () => {
    const container = await createContainer([{ name: "cp_lower", query: "SELECT VALUE LOWER(c.name) FROM c" }], undefined, items);
    const { resource: def } = await container.read();
    def.computedProperties.push({ name: "cp_upperCat", query: "SELECT VALUE UPPER(c.cat) FROM c" });
    def.indexingPolicy.includedPaths.push({ path: "/cp_upperCat/?" });
    await container.replace(def);
    const q = "SELECT VALUE c.id FROM c WHERE c.cp_upperCat = 'Y'";
    let r = await pagesOf(container, q);
    assert.deepEqual(r.rows.sort(), ids((i) => i % 3 === 1));
    while (!r.indexed) {
      r = await pagesOf(container, q);
      assert.deepEqual(r.rows.sort(), ids((i) => i % 3 === 1));
    }

    def.computedProperties[1].query = "SELECT VALUE UPPER(c.name) FROM c";
    await container.replace(def);
    const q2 = "SELECT VALUE c.id FROM c WHERE c.cp_upperCat = 'NAME-7'";
    assert.deepEqual((await pagesOf(container, q)).rows, []);
    r = await pagesOf(container, q2);
    assert.deepEqual(r.rows, ["i07"]);
    while (!r.indexed) {
      r = await pagesOf(container, q2);
      assert.deepEqual(r.rows, ["i07"]);
    }
  });

  test("a new one cannot take a path the policy names; an indexed one cannot be dropped with its path", async () => {
    const container = await createContainer(
      [{ name: "cp_lower", query: "SELECT VALUE LOWER(c.name) FROM c" }],
      { includedPaths: [{ path: "/*" }, { path: "/cp_lower/?" }], excludedPaths: [{ path: "/cat/?" }] },
      items.slice(0, 3),
    );
    const { resource: def } = await container.read();
    await expectCosmosError(
      container.replace({ ...def, computedProperties: [...def.computedProperties, { name: "cat", query: "SELECT VALUE 1 FROM c" }] }),
      400,
      { messageIncludes: "already names (/cat)" },
    );
    await expectCosmosError(container.replace({ ...def, computedProperties: [] }), 400, {
      messageIncludes: "cannot be removed while the indexing policy names its path (/cp_lower)",
    });
  });
});

test("an expired item is not seen through its computed properties", async () => {
  const { container } = await database.containers.create({
    id: uniqueId("c"),
    partitionKey: { paths: ["/id"] },
    defaultTtl: -1,
    computedProperties: [{ name: "cp_lower", query: "SELECT VALUE LOWER(c.name) FROM c" }],
    indexingPolicy: { includedPaths: [{ path: "/*" }, { path: "/cp_lower/?" }] },
  });
  await container.items.create({ id: "short", name: "Ada", ttl: 5 });
  await container.items.create({ id: "long", name: "ADA" });
  await advanceClock(server.endpoint, 10);
  assert.deepEqual(await all(container, "SELECT VALUE c.id FROM c WHERE c.cp_lower = 'ada'"), ["long"]);
  assert.deepEqual(await all(container, "SELECT VALUE c.id FROM c WHERE LENGTH(c.cp_lower) = 3"), ["long"]);
});

describe("definitions the service refuses", () => {
  const create = (computedProperties, indexingPolicy) =>
    database.containers.create({ id: uniqueId("bad"), partitionKey: { paths: ["/id"] }, computedProperties, indexingPolicy });
  const cases = [
    ["more than 20", Array.from({ length: 21 }, (_, i) => ({ name: `cp_${i}`, query: "SELECT VALUE 1 FROM c" })), "at most 20"],
    ["a repeated name", [{ name: "a", query: "SELECT VALUE 1 FROM c" }, { name: "a", query: "SELECT VALUE 2 FROM c" }], "must be unique"],
    ["id", [{ name: "id", query: "SELECT VALUE 1 FROM c" }], "reserved for a system property"],
    ["_ts", [{ name: "_ts", query: "SELECT VALUE 1 FROM c" }], "reserved for a system property"],
    ["no query", [{ name: "a" }], "has no"],
    ["not SELECT VALUE", [{ name: "a", query: "SELECT c.x FROM c" }], "must have the form SELECT VALUE"],
    ["WHERE", [{ name: "a", query: "SELECT VALUE c.x FROM c WHERE c.y = 1" }], "cannot use WHERE"],
    ["JOIN", [{ name: "a", query: "SELECT VALUE t FROM c JOIN t IN c.tags" }], "cannot use JOIN"],
    ["ORDER BY", [{ name: "a", query: "SELECT VALUE c.x FROM c ORDER BY c.x" }], "cannot use ORDER BY"],
    ["GROUP BY", [{ name: "a", query: "SELECT VALUE c.x FROM c GROUP BY c.x" }], "cannot use GROUP BY"],
    ["TOP", [{ name: "a", query: "SELECT TOP 1 VALUE c.x FROM c" }], "cannot use TOP"],
    ["DISTINCT", [{ name: "a", query: "SELECT DISTINCT VALUE c.x FROM c" }], "cannot use DISTINCT"],
    ["OFFSET LIMIT", [{ name: "a", query: "SELECT VALUE c.x FROM c OFFSET 1 LIMIT 1" }], "cannot use OFFSET LIMIT"],
    ["a subquery", [{ name: "a", query: "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags) FROM c" }], "cannot use a subquery"],
    ["an aggregate", [{ name: "a", query: "SELECT VALUE COUNT(1) FROM c" }], "cannot use the aggregate function COUNT"],
    ["GetCurrentDateTime", [{ name: "a", query: "SELECT VALUE GetCurrentDateTime() FROM c" }], "nondeterministic function GetCurrentDateTime"],
    ["RAND", [{ name: "a", query: "SELECT VALUE RAND() FROM c" }], "nondeterministic function RAND"],
    ["another computed property", [{ name: "a", query: "SELECT VALUE 1 FROM c" }, { name: "b", query: "SELECT VALUE c.a + 1 FROM c" }], "another computed property ('a')"],
  ];
  for (const [name, cps, want] of cases) {
    test(name, async () => {
      await expectCosmosError(create(cps), 400, { messageIncludes: want });
    });
  }
  test("a spatial index on one", async () => {
    await expectCosmosError(
      create([{ name: "loc", query: "SELECT VALUE c.p FROM c" }], { spatialIndexes: [{ path: "/loc/*", types: ["Point"] }] }),
      400,
      { messageIncludes: "cannot have a spatial index" },
    );
  });
});
