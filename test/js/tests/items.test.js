// Items through @azure/cosmos: CRUD, conditions, patch, partition keys
// (including hierarchical ones), read feed, queries and paging.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BulkOperationType, PartitionKeyBuilder, PartitionKeyKind } from "@azure/cosmos";

import { uniqueId, expectCosmosError, idsOf, openEbb, closeEbb } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-items")));
after(() => closeEbb({ server, client }));

async function newContainer(partitionKey = { paths: ["/pk"] }) {
  const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey });
  return container;
}

describe("item CRUD", () => {
  let container;
  before(async () => {
    container = await newContainer();
  });

  test("create returns 201 with the body and system properties", async () => {
    const res = await container.items.create({ id: "create-1", pk: "a", n: 1, nested: { s: "x" } });
    assert.equal(res.statusCode, 201);
    assert.equal(res.resource.id, "create-1");
    assert.equal(res.resource.n, 1);
    assert.deepEqual(res.resource.nested, { s: "x" });
    for (const prop of ["_rid", "_self", "_etag", "_ts"]) {
      assert.ok(res.resource[prop] !== undefined, `created item has ${prop}`);
    }
    assert.equal(typeof res.resource._ts, "number");
    assert.equal(res.etag, res.resource._etag, "etag header equals _etag");
  });

  test("read returns 200 and the stored item", async () => {
    await container.items.create({ id: "read-1", pk: "a", n: 2 });
    const res = await container.item("read-1", "a").read();
    assert.equal(res.statusCode, 200);
    assert.equal(res.resource.id, "read-1");
    assert.equal(res.resource.n, 2);
  });

  test("read of a missing item gives statusCode 404 and no resource", async () => {
    const res = await container.item("no-such-item", "a").read();
    assert.equal(res.statusCode, 404);
    assert.equal(res.resource, undefined);
  });

  test("read with the wrong partition key gives 404", async () => {
    await container.items.create({ id: "read-2", pk: "a" });
    const res = await container.item("read-2", "b").read();
    assert.equal(res.statusCode, 404);
  });

  test("creating the same id twice in a partition gives 409", async () => {
    await container.items.create({ id: "dup-1", pk: "a" });
    await expectCosmosError(container.items.create({ id: "dup-1", pk: "a" }), 409);
  });

  test("the same id in two partitions is two items", async () => {
    await container.items.create({ id: "twin", pk: "a", side: "a" });
    await container.items.create({ id: "twin", pk: "b", side: "b" });
    assert.equal((await container.item("twin", "a").read()).resource.side, "a");
    assert.equal((await container.item("twin", "b").read()).resource.side, "b");
  });

  test("replace returns 200 with the new body and a new etag", async () => {
    const created = await container.items.create({ id: "replace-1", pk: "a", n: 1 });
    const res = await container.item("replace-1", "a").replace({ id: "replace-1", pk: "a", n: 2 });
    assert.equal(res.statusCode, 200);
    assert.equal(res.resource.n, 2);
    assert.notEqual(res.resource._etag, created.resource._etag);
    assert.equal((await container.item("replace-1", "a").read()).resource.n, 2);
  });

  test("replace of a missing item gives 404", async () => {
    await expectCosmosError(container.item("replace-missing", "a").replace({ id: "replace-missing", pk: "a" }), 404);
  });

  test("upsert creates with 201, then replaces with 200", async () => {
    const first = await container.items.upsert({ id: "upsert-1", pk: "a", n: 1 });
    assert.equal(first.statusCode, 201);
    const second = await container.items.upsert({ id: "upsert-1", pk: "a", n: 2 });
    assert.equal(second.statusCode, 200);
    assert.equal(second.resource.n, 2);
    assert.equal((await container.item("upsert-1", "a").read()).resource.n, 2);
  });

  test("delete returns 204, then the item reads as 404 and a second delete gives 404", async () => {
    await container.items.create({ id: "delete-1", pk: "a" });
    const res = await container.item("delete-1", "a").delete();
    assert.equal(res.statusCode, 204);
    assert.equal((await container.item("delete-1", "a").read()).statusCode, 404);
    await expectCosmosError(container.item("delete-1", "a").delete(), 404);
  });

  test("a partition key in the body that differs from the request's gives 400", async () => {
    await container.items.create({ id: "pk-mismatch", pk: "a" });
    // Replace addresses partition "a" but the body says "b".
    await expectCosmosError(container.item("pk-mismatch", "a").replace({ id: "pk-mismatch", pk: "b" }), 400);
    // Create with an explicit partition key header that disagrees with the body.
    await expectCosmosError(
      container.items.create({ id: "pk-mismatch-2", pk: "a" }, { initialHeaders: { "x-ms-documentdb-partitionkey": '["b"]' } }),
      400,
    );
    assert.equal((await container.item("pk-mismatch-2", "a").read()).statusCode, 404);
    assert.equal((await container.item("pk-mismatch-2", "b").read()).statusCode, 404);
  });

  test("numeric and boolean partition keys work", async () => {
    await container.items.create({ id: "pk-num", pk: 5 });
    await container.items.create({ id: "pk-bool", pk: true });
    assert.equal((await container.item("pk-num", 5).read()).statusCode, 200);
    assert.equal((await container.item("pk-bool", true).read()).statusCode, 200);
    assert.equal((await container.item("pk-num", "5").read()).statusCode, 404);
  });
});

describe("conditional writes", () => {
  let container;
  before(async () => {
    container = await newContainer();
  });

  test("replace with IfMatch on the current etag succeeds", async () => {
    const { resource } = await container.items.create({ id: "if-match-ok", pk: "a", n: 1 });
    const res = await container
      .item("if-match-ok", "a")
      .replace({ id: "if-match-ok", pk: "a", n: 2 }, { accessCondition: { type: "IfMatch", condition: resource._etag } });
    assert.equal(res.statusCode, 200);
  });

  test("replace and delete with IfMatch on a stale etag give 412", async () => {
    const { resource: v1 } = await container.items.create({ id: "if-match-stale", pk: "a", n: 1 });
    await container.item("if-match-stale", "a").replace({ id: "if-match-stale", pk: "a", n: 2 });
    const stale = { accessCondition: { type: "IfMatch", condition: v1._etag } };

    await expectCosmosError(container.item("if-match-stale", "a").replace({ id: "if-match-stale", pk: "a", n: 3 }, stale), 412);
    await expectCosmosError(container.item("if-match-stale", "a").delete(stale), 412);
    assert.equal((await container.item("if-match-stale", "a").read()).resource.n, 2);
  });

  test("upsert over an existing item with IfMatch on a stale etag gives 412", async () => {
    const { resource: v1 } = await container.items.create({ id: "if-match-upsert", pk: "a", n: 1 });
    await container.item("if-match-upsert", "a").replace({ id: "if-match-upsert", pk: "a", n: 2 });
    const stale = { accessCondition: { type: "IfMatch", condition: v1._etag } };
    await expectCosmosError(container.items.upsert({ id: "if-match-upsert", pk: "a", n: 3 }, stale), 412);
    assert.equal((await container.item("if-match-upsert", "a").read()).resource.n, 2);
  });
});

describe("patch", () => {
  let container;
  before(async () => {
    container = await newContainer();
  });

  const seed = (id) => ({ id, pk: "a", a: 1, counter: 3, nested: { b: 2 }, toRemove: true, tags: ["x"] });

  test("a bare array of add, set, replace, remove and incr operations applies in order", async () => {
    const { resource: before } = await container.items.create(seed("patch-1"));
    const res = await container.item("patch-1", "a").patch([
      { op: "add", path: "/added", value: "new" },
      { op: "set", path: "/a", value: 10 },
      { op: "replace", path: "/nested/b", value: 20 },
      { op: "remove", path: "/toRemove" },
      { op: "incr", path: "/counter", value: 1 },
    ]);
    assert.equal(res.statusCode, 200);
    const doc = res.resource;
    assert.equal(doc.added, "new");
    assert.equal(doc.a, 10);
    assert.equal(doc.nested.b, 20);
    assert.equal("toRemove" in doc, false);
    assert.equal(doc.counter, 4);
    assert.notEqual(doc._etag, before._etag, "patch is a write: new etag");

    const { resource: read } = await container.item("patch-1", "a").read();
    assert.equal(read.counter, 4);
    assert.equal(read.added, "new");
  });

  test("add with /- appends to an array", async () => {
    await container.items.create(seed("patch-append"));
    const { resource } = await container.item("patch-append", "a").patch([{ op: "add", path: "/tags/-", value: "y" }]);
    assert.deepEqual(resource.tags, ["x", "y"]);
  });

  test("a condition that holds lets the patch apply", async () => {
    await container.items.create(seed("patch-cond-true"));
    const res = await container.item("patch-cond-true", "a").patch({
      condition: "FROM c WHERE c.a = 1",
      operations: [{ op: "set", path: "/a", value: 2 }],
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.resource.a, 2);
  });

  test("a condition that is false gives 412 and changes nothing", async () => {
    await container.items.create(seed("patch-cond-false"));
    await expectCosmosError(
      container.item("patch-cond-false", "a").patch({
        condition: "FROM c WHERE c.a = 999",
        operations: [{ op: "set", path: "/a", value: 2 }],
      }),
      412,
    );
    assert.equal((await container.item("patch-cond-false", "a").read()).resource.a, 1);
  });

  test("remove of a missing path gives 400", async () => {
    await container.items.create(seed("patch-remove-missing"));
    await expectCosmosError(container.item("patch-remove-missing", "a").patch([{ op: "remove", path: "/nope" }]), 400);
  });

  test("patch of a missing item gives 404", async () => {
    await expectCosmosError(container.item("patch-missing", "a").patch([{ op: "set", path: "/a", value: 1 }]), 404);
  });
});

describe("hierarchical partition keys", () => {
  test("a two-level key: create, read, and query by the full key and by its first level", async () => {
    const container = await newContainer({ paths: ["/tenant", "/user"], kind: PartitionKeyKind.MultiHash, version: 2 });
    const { resource: def } = await container.read();
    assert.deepEqual(def.partitionKey.paths, ["/tenant", "/user"]);
    assert.equal(def.partitionKey.kind, "MultiHash");

    const items = [
      { id: "1", tenant: "t1", user: "u1" },
      { id: "2", tenant: "t1", user: "u2" },
      { id: "3", tenant: "t2", user: "u1" },
    ];
    for (const item of items) {
      assert.equal((await container.items.create(item)).statusCode, 201);
    }

    const read = await container.item("2", ["t1", "u2"]).read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.user, "u2");
    assert.equal((await container.item("2", ["t1", "u1"]).read()).statusCode, 404);

    const full = await container.items.query("SELECT * FROM c", { partitionKey: ["t1", "u1"] }).fetchAll();
    assert.deepEqual(idsOf(full.resources), ["1"]);

    const prefix = await container.items.query("SELECT * FROM c", { partitionKey: ["t1"] }).fetchAll();
    assert.deepEqual(idsOf(prefix.resources), ["1", "2"]);

    const all = await container.items.query("SELECT * FROM c").fetchAll();
    assert.deepEqual(idsOf(all.resources), ["1", "2", "3"]);
  });

  test("a three-level key: create, read, replace, delete, and query by one- and two-level prefixes", async () => {
    const container = await newContainer({
      paths: ["/tenant", "/user", "/session"],
      kind: PartitionKeyKind.MultiHash,
      version: 2,
    });
    const items = [
      { id: "a", tenant: "t1", user: "u1", session: "s1" },
      { id: "b", tenant: "t1", user: "u1", session: "s2" },
      { id: "c", tenant: "t1", user: "u2", session: "s1" },
      { id: "d", tenant: "t2", user: "u1", session: "s1" },
    ];
    for (const item of items) await container.items.create(item);

    const pkOf = (i) => [i.tenant, i.user, i.session];
    for (const item of items) {
      const res = await container.item(item.id, pkOf(item)).read();
      assert.equal(res.statusCode, 200, `read ${item.id}`);
    }

    const replaced = await container.item("a", ["t1", "u1", "s1"]).replace({ ...items[0], note: "x" });
    assert.equal(replaced.resource.note, "x");

    const q = (partitionKey) => container.items.query("SELECT * FROM c", { partitionKey }).fetchAll();
    assert.deepEqual(idsOf((await q(["t1"])).resources), ["a", "b", "c"]);
    assert.deepEqual(idsOf((await q(["t1", "u1"])).resources), ["a", "b"]);
    assert.deepEqual(idsOf((await q(["t1", "u1", "s2"])).resources), ["b"]);
    assert.deepEqual(idsOf((await q(["t3"])).resources), []);

    const withParam = await container.items
      .query({ query: "SELECT * FROM c WHERE c.session = @s", parameters: [{ name: "@s", value: "s1" }] }, { partitionKey: ["t1"] })
      .fetchAll();
    assert.deepEqual(idsOf(withParam.resources), ["a", "c"]);

    assert.equal((await container.item("d", ["t2", "u1", "s1"]).delete()).statusCode, 204);
    assert.deepEqual(idsOf((await q(["t2"])).resources), []);
  });

  test("a None level ({} in the SDK's key) works in documents, point operations, batch and bulk", async () => {
    const container = await newContainer({ paths: ["/a", "/b"], kind: PartitionKeyKind.MultiHash, version: 2 });
    const pk = new PartitionKeyBuilder().addValue("x").addNoneValue().build();
    // The SDK sends ["x",{}] for a document whose /b is {} or missing.
    assert.equal((await container.items.create({ id: "1", a: "x", b: {} })).statusCode, 201);
    assert.equal((await container.items.upsert({ id: "2", a: "x" })).statusCode, 201);
    const batch = await container.items.batch([{ operationType: BulkOperationType.Create, resourceBody: { id: "3", a: "x", b: {} } }], pk);
    assert.equal(batch.result[0].statusCode, 201);
    const bulk = await container.items.bulk([
      { operationType: BulkOperationType.Create, resourceBody: { id: "4", a: "x", b: {} } },
      { operationType: BulkOperationType.Read, id: "1", partitionKey: pk },
    ]);
    assert.deepEqual(bulk.map((r) => r.statusCode), [201, 200]);
    for (const id of ["1", "2", "3", "4"]) {
      assert.equal((await container.item(id, pk).read()).statusCode, 200, `read ${id}`);
    }
    const { resources } = await container.items.query("SELECT * FROM c", { partitionKey: pk }).fetchAll();
    assert.deepEqual(idsOf(resources), ["1", "2", "3", "4"]);
    assert.equal((await container.item("1", pk).delete()).statusCode, 204);
  });
});

describe("read feed, queries and paging", () => {
  let container;
  const all = [];
  before(async () => {
    container = await newContainer();
    for (let i = 0; i < 5; i++) {
      const item = { id: `q${i}`, pk: i % 2 === 0 ? "even" : "odd", n: i, category: i < 3 ? "low" : "high" };
      await container.items.create(item);
      all.push(item.id);
    }
  });

  test("items.readAll().fetchAll() returns every item", async () => {
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(idsOf(resources), all);
    for (const doc of resources) assert.ok(doc._rid && doc._ts, "read-feed items carry system properties");
  });

  test("SELECT * FROM root r across partitions returns every item", async () => {
    const { resources } = await container.items.query("SELECT * FROM root r").fetchAll();
    assert.deepEqual(idsOf(resources), all);
  });

  test("a query with a partition key returns only that partition", async () => {
    const { resources } = await container.items.query("SELECT * FROM c", { partitionKey: "even" }).fetchAll();
    assert.deepEqual(idsOf(resources), ["q0", "q2", "q4"]);
  });

  test("query parameters bind strings and numbers", async () => {
    const { resources } = await container.items
      .query({
        query: "SELECT * FROM c WHERE c.category = @cat AND c.n > @min",
        parameters: [
          { name: "@cat", value: "low" },
          { name: "@min", value: 0 },
        ],
      })
      .fetchAll();
    assert.deepEqual(idsOf(resources), ["q1", "q2"]);
  });

  test("projections and SELECT VALUE return plain values", async () => {
    const { resources } = await container.items.query("SELECT VALUE c.n FROM c WHERE c.pk = 'odd'").fetchAll();
    assert.deepEqual([...resources].sort(), [1, 3]);
    const { resources: count } = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(count, [5]);
  });

  test("fetchNext with maxItemCount 2 pages through every item", async () => {
    const iterator = container.items.query("SELECT * FROM root r", { maxItemCount: 2 });
    const pages = [];
    let firstContinuation;
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      if (pages.length === 0) firstContinuation = page.continuationToken;
      pages.push(page.resources);
      assert.ok(pages.length <= 10, "paging terminates");
    }
    for (const page of pages) assert.ok(page.length <= 2, `page of ${page.length} items exceeds maxItemCount 2`);
    assert.equal(pages[0].length, 2, "the first page is full");
    assert.ok(firstContinuation, "a full first page carries a continuation");
    assert.ok(pages.filter((p) => p.length > 0).length >= 3, `5 items in pages of 2: ${JSON.stringify(pages.map((p) => p.length))}`);
    assert.deepEqual(idsOf(pages.flat()), all);
  });

  test("fetchNext with maxItemCount pages a single partition too", async () => {
    const iterator = container.items.query("SELECT * FROM c", { partitionKey: "even", maxItemCount: 1 });
    const seen = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      assert.ok(page.resources.length <= 1);
      seen.push(...page.resources);
      assert.ok(seen.length <= 3, "no item is returned twice");
    }
    assert.deepEqual(idsOf(seen), ["q0", "q2", "q4"]);
  });

  test("readAll with maxItemCount pages through every item", async () => {
    const iterator = container.items.readAll({ maxItemCount: 3 });
    const first = await iterator.fetchNext();
    assert.equal(first.resources.length, 3);
    assert.equal(first.hasMoreResults, true);
    const rest = [];
    while (iterator.hasMoreResults()) rest.push(...(await iterator.fetchNext()).resources);
    assert.deepEqual(idsOf([...first.resources, ...rest]), all);
  });

  test("ORDER BY sorts across partitions", async () => {
    const { resources } = await container.items.query("SELECT * FROM c ORDER BY c.n DESC").fetchAll();
    assert.deepEqual(
      resources.map((d) => d.n),
      [4, 3, 2, 1, 0],
    );
  });
});
