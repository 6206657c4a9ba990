// Server-side JavaScript through @azure/cosmos (container.scripts):
// stored procedures (one transaction per logical partition, the
// server-side API, TTL inside scripts, the time budget) and pre- and
// post-triggers on item writes.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, advanceClock, openEbb, closeEbb, expectCosmosError } from "../lib/cosmos.js";

let server;
let client;
let database;

// A short time budget, so the test of a procedure that never returns
// does not wait the default 5 seconds.
before(async () => ({ server, client, database } = await openEbb("db-scripts", { extraArgs: ["--script-time-budget", "1s"] })));
after(() => closeEbb({ server, client }));

async function newContainer(extra = {}) {
  const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] }, ...extra });
  return container;
}

async function procedure(container, id, fn) {
  await container.scripts.storedProcedures.create({ id, body: fn.toString() });
  return container.scripts.storedProcedure(id);
}

// The service's samples' bulk import: creates docs one by one and
// returns how many it created; it throws at failAt.
function bulkImport(docs, failAt) {
  const collection = getContext().getCollection();
  let count = 0;
  function next() {
    if (count === failAt) throw new Error("failed at " + count);
    if (count >= docs.length) {
      getContext().getResponse().setBody(count);
      return;
    }
    const accepted = collection.createDocument(collection.getSelfLink(), docs[count], (err) => {
      if (err) throw err;
      count++;
      next();
    });
    if (!accepted) getContext().getResponse().setBody(count);
  }
  next();
}

const countIn = async (container, pk) =>
  (await container.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: pk }).fetchAll()).resources[0];

describe("stored procedures", () => {
  test("a bulk import commits all 100 items, and one that throws half-way commits none", async () => {
    const container = await newContainer();
    const sp = await procedure(container, "bulkImport", bulkImport);
    const docs = Array.from({ length: 100 }, (_, i) => ({ id: `d${i}`, pk: "p", n: i }));
    const res = await sp.execute("p", [docs, -1]);
    assert.equal(res.resource, 100);
    assert.ok(res.requestCharge > 0);
    assert.equal(await countIn(container, "p"), 100);

    const more = docs.map((d) => ({ ...d, id: `e${d.n}` }));
    const err = await expectCosmosError(sp.execute("p", [more, 50]), 400, {
      messageIncludes: "Encountered exception while executing function. Exception = Error: failed at 50",
    });
    assert.ok(err);
    assert.equal(await countIn(container, "p"), 100);
  });

  test("an operation's error reaches its callback; uncaught, it fails the call with its number as substatus", async () => {
    const container = await newContainer();
    await container.items.create({ id: "a", pk: "p", v: 1 });
    const sp = await procedure(container, "occ", function occ() {
      const c = getContext().getCollection();
      c.readDocument(c.getAltLink() + "/docs/a", (err, doc) => {
        doc.v++;
        c.replaceDocument(doc._self, doc, { etag: doc._etag }, (err2, updated) => {
          // The etag read before the first replace is stale now.
          c.replaceDocument(doc._self, doc, { etag: doc._etag }, (err3) => {
            getContext().getResponse().setBody({ v: updated.v, stale: err3.number });
          });
        });
      });
    });
    assert.deepEqual((await sp.execute("p")).resource, { v: 2, stale: 412 });

    const conflict = await procedure(container, "conflict", function conflict() {
      const c = getContext().getCollection();
      c.createDocument(c.getSelfLink(), { id: "a", pk: "p" });
    });
    const err = await expectCosmosError(conflict.execute("p"), 400, { messageIncludes: "Entity with the specified id already exists" });
    assert.equal(err.substatus, 409);

    const numbered = await procedure(container, "numbered", function numbered() {
      throw new Error(ErrorCodes.NotFound, "no such order");
    });
    const err2 = await expectCosmosError(numbered.execute("p"), 400, { messageIncludes: "Error: no such order" });
    assert.equal(err2.substatus, 404);
  });

  test("queries page with continuations and see the procedure's own writes, in its partition only", async () => {
    const container = await newContainer();
    for (let i = 0; i < 10; i++) await container.items.create({ id: `d${i}`, pk: "p", n: i });
    await container.items.create({ id: "other", pk: "q", n: 1 });
    const sp = await procedure(container, "pages", function pages(min) {
      const c = getContext().getCollection();
      c.createDocument(c.getSelfLink(), { id: "mine", pk: "p", n: 100 });
      const ids = [];
      let pageCount = 0;
      (function page(continuation) {
        c.queryDocuments(
          c.getSelfLink(),
          { query: "SELECT c.id FROM c WHERE c.n >= @min", parameters: [{ name: "@min", value: min }] },
          { pageSize: 2, continuation },
          (err, docs, options) => {
            if (err) throw err;
            pageCount++;
            docs.forEach((d) => ids.push(d.id));
            if (options.continuation) page(options.continuation);
            else getContext().getResponse().setBody({ ids, pageCount });
          },
        );
      })();
    });
    const { resource } = await sp.execute("p", [5]);
    assert.deepEqual(resource.ids.sort(), ["d5", "d6", "d7", "d8", "d9", "mine"]);
    // Pages of two; a full last page may be followed by an empty one.
    assert.ok(resource.pageCount >= 3, `${resource.pageCount} pages`);
  });

  test("the __ query API filters, maps and sorts the partition's documents", async () => {
    const container = await newContainer();
    for (const [id, n] of [["a", 3], ["b", 1], ["c", 2]]) await container.items.create({ id, pk: "p", n });
    const sp = await procedure(container, "chain", function chain() {
      __.chain()
        .filter((d) => d.n >= 2)
        .sortBy((d) => d.n)
        .pluck("id")
        .value((err, ids) => getContext().getResponse().setBody(ids));
    });
    assert.deepEqual((await sp.execute("p")).resource, ["c", "a"]);
  });

  test("TTL: expired items are invisible to the procedure, its writes stamp the request's _ts, and ttl is checked as for a client", async () => {
    const container = await newContainer({ defaultTtl: 10 });
    await container.items.create({ id: "old", pk: "p" });
    await advanceClock(server.endpoint, 11);
    const sp = await procedure(container, "ttl", function ttl() {
      const c = getContext().getCollection();
      c.readDocuments(c.getSelfLink(), (err, docs) => {
        c.createDocument(c.getSelfLink(), { id: "old", pk: "p", ttl: 5 }, (err2, doc) => {
          c.createDocument(c.getSelfLink(), { id: "bad", pk: "p", ttl: 0 }, (err3) => {
            getContext().getResponse().setBody({ seen: docs.length, ts: doc._ts, bad: err3.number, message: err3.message });
          });
        });
      });
    });
    const { resource } = await sp.execute("p");
    const clientErr = await expectCosmosError(container.items.create({ id: "bad", pk: "p", ttl: 0 }), 400);
    assert.equal(resource.seen, 0);
    assert.equal(resource.bad, 400);
    assert.ok(clientErr.message.includes(JSON.parse(resource.message).Errors[0]), `${resource.message} vs ${clientErr.message}`);
    const { resource: recreated } = await container.item("old", "p").read();
    assert.equal(recreated._ts, resource.ts);
    assert.equal(recreated.ttl, 5);
  });

  test("console.log comes back with enableScriptLogging", async () => {
    const container = await newContainer();
    const sp = await procedure(container, "log", function log(x) {
      console.log("got", x);
      getContext().getResponse().setBody(x);
    });
    const res = await sp.execute("p", [{ a: 1 }], { enableScriptLogging: true });
    assert.equal(decodeURIComponent(res.headers["x-ms-documentdb-script-log-results"]), 'got {"a":1}');
  });

  test("a procedure that never returns is stopped with 408, and others are served meanwhile", async () => {
    const container = await newContainer();
    const sp = await procedure(container, "spin", function spin() {
      const c = getContext().getCollection();
      c.createDocument(c.getSelfLink(), { id: "x", pk: "p" });
      for (;;) {}
    });
    const running = expectCosmosError(sp.execute("p"), 408, { messageIncludes: "time budget" });
    await container.items.create({ id: "meanwhile", pk: "p" });
    await container.item("meanwhile", "p").read();
    await running;
    assert.equal(await countIn(container, "p"), 1);
  });

  test("a procedure runs only with a partition key, its arguments an array, and only if it exists", async () => {
    const container = await newContainer();
    await procedure(container, "noop", function noop() {});
    await expectCosmosError(container.scripts.storedProcedure("missing").execute("p"), 404);
  });
});

async function trigger(container, id, triggerType, triggerOperation, fn) {
  await container.scripts.triggers.create({ id, triggerType, triggerOperation, body: fn.toString() });
}

describe("triggers", () => {
  test("a pre-trigger stamps the document, and one that throws rejects the write", async () => {
    const container = await newContainer();
    await trigger(container, "stamp", "Pre", "All", function stamp() {
      const req = getContext().getRequest();
      const doc = req.getBody();
      doc.createdBy = "trigger";
      doc.op = req.getOperationType();
      req.setBody(doc);
    });
    await trigger(container, "requireName", "Pre", "Create", function requireName() {
      if (!getContext().getRequest().getBody().name) throw new Error("name is required");
    });
    const { resource } = await container.items.create({ id: "a", pk: "p" }, { preTriggerInclude: ["stamp"] });
    assert.equal(resource.createdBy, "trigger");
    assert.equal(resource.op, "Create");
    const { resource: upserted } = await container.items.upsert({ id: "a", pk: "p" }, { preTriggerInclude: ["stamp"] });
    assert.equal(upserted.op, "Upsert");

    await expectCosmosError(container.items.create({ id: "b", pk: "p" }, { preTriggerInclude: ["requireName"] }), 400, {
      messageIncludes: "name is required",
    });
    assert.equal((await container.item("b", "p").read()).statusCode, 404);
    await expectCosmosError(container.items.upsert({ id: "b", pk: "p" }, { preTriggerInclude: ["requireName"] }), 400, {
      messageIncludes: "Trigger 'requireName' was defined with operation type 'Create', and therefore is invalid for 'Upsert'.",
    });
  });

  test("a post-trigger writes an audit item in the same transaction, and one that throws rolls the write back", async () => {
    const container = await newContainer();
    await trigger(container, "audit", "Post", "All", function audit() {
      const c = getContext().getCollection();
      const doc = getContext().getResponse().getBody();
      const op = getContext().getRequest().getOperationType();
      c.createDocument(c.getSelfLink(), { id: `audit-${op}-${doc ? doc.id : "deleted"}`, pk: "p", of: doc ? doc._etag : null });
    });
    await trigger(container, "veto", "Post", "All", function veto() {
      throw new Error("vetoed");
    });
    const { resource, etag } = await container.items.create({ id: "a", pk: "p" }, { postTriggerInclude: ["audit"] });
    const { resource: auditRecord } = await container.item("audit-Create-a", "p").read();
    assert.equal(auditRecord.of, resource._etag);
    assert.equal(auditRecord.of, etag);

    await expectCosmosError(container.items.create({ id: "b", pk: "p" }, { postTriggerInclude: ["veto"] }), 400, { messageIncludes: "vetoed" });
    assert.equal((await container.item("b", "p").read()).statusCode, 404);
    await expectCosmosError(container.item("a", "p").replace({ id: "a", pk: "p", v: 2 }, { postTriggerInclude: ["veto"] }), 400);
    assert.equal((await container.item("a", "p").read()).resource.v, undefined);
    await container.item("a", "p").delete({ postTriggerInclude: ["audit"] });
    await container.item("audit-Delete-deleted", "p").read();
  });
});

describe("user-defined functions", () => {
  test("udf.* works in the projection, WHERE and ORDER BY, across partitions through the query plan", async () => {
    const container = await newContainer();
    for (const [id, pk, price] of [["a", "p", 10], ["b", "q", 200], ["c", "p", 50]]) {
      await container.items.create({ id, pk, price });
    }
    await container.scripts.userDefinedFunctions.create({ id: "tax", body: "function tax(price) { return price * 0.2; }" });
    await container.scripts.userDefinedFunctions.create({
      id: "label",
      body: "function (doc) { return { id: doc.id, big: doc.price > 20, nothing: undefined }; }",
    });
    const { resources } = await container.items
      .query("SELECT c.id, udf.tax(c.price) AS tax, udf.label(c) AS label FROM c WHERE udf.tax(c.price) >= 10 ORDER BY c.id")
      .fetchAll();
    assert.deepEqual(resources, [
      { id: "b", tax: 40, label: { id: "b", big: true } },
      { id: "c", tax: 10, label: { id: "c", big: true } },
    ]);
    const { resources: inPartition } = await container.items
      .query({ query: "SELECT VALUE udf.tax(c.price) FROM c WHERE c.price > @min", parameters: [{ name: "@min", value: 5 }] }, { partitionKey: "p" })
      .fetchAll();
    assert.deepEqual(inPartition.sort((x, y) => x - y), [2, 10]);
  });

  test("a function that throws fails the query with its message; an unknown one is 400", async () => {
    const container = await newContainer();
    await container.items.create({ id: "a", pk: "p" });
    await container.scripts.userDefinedFunctions.create({ id: "boom", body: "function () { throw new Error('boom'); }" });
    await expectCosmosError(container.items.query("SELECT VALUE udf.boom() FROM c", { partitionKey: "p" }).fetchAll(), 400, {
      messageIncludes: "Exception = Error: boom",
    });
    await expectCosmosError(container.items.query("SELECT VALUE udf.nope() FROM c", { partitionKey: "p" }).fetchAll(), 400, {
      messageIncludes: "no user-defined function 'nope'",
    });
  });
});
