// Transactional batch (items.batch) and bulk (items.bulk and
// items.executeBulkOperations) through @azure/cosmos.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, advanceClock, openEbb, closeEbb } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-batch")));
after(() => closeEbb({ server, client }));

async function newContainer(extra = {}) {
  const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] }, ...extra });
  return container;
}

const statuses = (results) => results.map((r) => r.statusCode);

describe("transactional batch", () => {
  test("runs every kind of operation and commits them together", async () => {
    const container = await newContainer();
    await container.items.create({ id: "r", pk: "p", v: 1 });
    await container.items.create({ id: "d", pk: "p" });
    const { etag } = await container.items.create({ id: "x", pk: "p", v: 1 });
    const res = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "new", pk: "p" } },
        { operationType: "Upsert", resourceBody: { id: "up", pk: "p" } },
        { operationType: "Replace", id: "r", resourceBody: { id: "r", pk: "p", v: 2 } },
        { operationType: "Read", id: "new" },
        { operationType: "Delete", id: "d" },
        { operationType: "Patch", id: "x", ifMatch: etag, resourceBody: { operations: [{ op: "incr", path: "/v", value: 4 }] } },
      ],
      "p",
    );
    assert.equal(res.code, 200);
    assert.deepEqual(statuses(res.result), [201, 201, 200, 200, 204, 200]);
    for (const r of res.result) assert.ok(r.requestCharge > 0, "every operation has a charge");
    assert.equal(res.result[3].resourceBody.id, "new");
    assert.equal(res.result[5].resourceBody.v, 5);
    assert.equal((await container.item("d", "p").read()).statusCode, 404);
    assert.equal((await container.item("up", "p").read()).statusCode, 200);
  });

  test("a failing operation commits nothing: 207, its status, 424 for the others", async () => {
    const container = await newContainer();
    await container.items.create({ id: "taken", pk: "p" });
    const res = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "a", pk: "p" } },
        { operationType: "Delete", id: "taken" },
        { operationType: "Create", resourceBody: { id: "taken", pk: "p" } },
        { operationType: "Create", resourceBody: { id: "taken", pk: "p" } },
      ],
      "p",
    );
    assert.equal(res.code, 207);
    assert.deepEqual(statuses(res.result), [424, 424, 424, 409]);
    assert.equal((await container.item("a", "p").read()).statusCode, 404);
    assert.equal((await container.item("taken", "p").read()).statusCode, 200);
    const { resources } = await container.items.readAll().fetchAll();
    assert.deepEqual(resources.map((d) => d.id), ["taken"]);
  });

  test("reading an expired item fails the batch; creating over it succeeds", async () => {
    const container = await newContainer({ defaultTtl: -1 });
    await container.items.create({ id: "e", pk: "p", ttl: 2 });
    await advanceClock(server.endpoint, 2);
    const failed = await container.items.batch([{ operationType: "Read", id: "e" }], "p");
    assert.equal(failed.code, 207);
    assert.deepEqual(statuses(failed.result), [404]);
    const ok = await container.items.batch(
      [
        { operationType: "Create", resourceBody: { id: "e", pk: "p" } },
        { operationType: "Read", id: "e" },
      ],
      "p",
    );
    assert.equal(ok.code, 200);
    assert.deepEqual(statuses(ok.result), [201, 200]);
  });

  test("more than 100 operations or another partition key are refused", async () => {
    const container = await newContainer();
    const many = Array.from({ length: 100 }, (_, i) => ({ operationType: "Create", resourceBody: { id: `i${i}`, pk: "p" } }));
    assert.equal((await container.items.batch(many, "p")).code, 200);
    await assert.rejects(
      container.items.batch([{ operationType: "Create", resourceBody: { id: "z", pk: "other" } }], "p"),
      /partition key/,
    );
  });

  test("an operation with another partition key: 400 in the service's words", async () => {
    // As the SDK's own batch test has it: an operation's partitionKey, or
    // its document's, differs from the batch's.
    const container = await newContainer();
    // The SDK rethrows a failed batch as a plain Error with the server's
    // message (Items.batch), so only the message can be checked.
    const words = "One or more operations within the batch request have a different partition key value than the request.";
    const hasWords = (err) => {
      assert.ok(err.message.includes(words), `message: ${err.message}`);
      return true;
    };
    await assert.rejects(
      container.items.batch(
        [
          { operationType: "Create", resourceBody: { id: "a", pk: "B" }, partitionKey: "B" },
          { operationType: "Upsert", resourceBody: { id: "b", pk: "B" }, partitionKey: "A" },
        ],
        "B",
      ),
      hasWords,
    );
    await assert.rejects(container.items.batch([{ operationType: "Create", resourceBody: { id: "c", pk: "A" } }], "B"), hasWords);
  });
});

describe("bulk", () => {
  test("items.bulk: independent results across partition keys", async () => {
    const container = await newContainer();
    await container.items.create({ id: "taken", pk: "p2" });
    const results = await container.items.bulk([
      { operationType: "Create", resourceBody: { id: "a", pk: "p1" } },
      { operationType: "Create", resourceBody: { id: "taken", pk: "p2" } },
      { operationType: "Upsert", resourceBody: { id: "b", pk: "p3" } },
      { operationType: "Read", id: "taken", partitionKey: "p2" },
      { operationType: "Delete", id: "missing", partitionKey: "p1" },
    ]);
    assert.deepEqual(statuses(results), [201, 409, 201, 200, 404]);
    assert.equal(results[3].resourceBody.id, "taken");
    assert.equal((await container.item("a", "p1").read()).statusCode, 200);
    assert.equal((await container.item("b", "p3").read()).statusCode, 200);
  });

  test("items.bulk without continueOnError stops at the first failure", async () => {
    const container = await newContainer();
    await container.items.create({ id: "taken", pk: "p" });
    const results = await container.items.bulk(
      [
        { operationType: "Create", resourceBody: { id: "a", pk: "p" } },
        { operationType: "Create", resourceBody: { id: "taken", pk: "p" } },
        { operationType: "Create", resourceBody: { id: "c", pk: "p" } },
      ],
      { continueOnError: false },
    );
    assert.deepEqual(statuses(results), [201, 409, 424]);
    assert.equal((await container.item("a", "p").read()).statusCode, 200);
    assert.equal((await container.item("c", "p").read()).statusCode, 404);
  });

  test("executeBulkOperations: partial failure", async () => {
    // executeBulkOperations needs every operation's partitionKey.
    const container = await newContainer();
    await container.items.create({ id: "taken", pk: "q" });
    const results = await container.items.executeBulkOperations([
      { operationType: "Create", partitionKey: "q", resourceBody: { id: "ok", pk: "q" } },
      { operationType: "Create", partitionKey: "q", resourceBody: { id: "taken", pk: "q" } },
      { operationType: "Replace", partitionKey: "r", id: "absent", resourceBody: { id: "absent", pk: "r" } },
      { operationType: "Patch", id: "ok", partitionKey: "q", resourceBody: { operations: [{ op: "add", path: "/n", value: 1 }] } },
    ]);
    assert.equal(results.length, 4);
    assert.equal(results[0].response?.statusCode, 201);
    assert.equal(results[1].error?.code, 409);
    assert.equal(results[2].error?.code, 404);
    assert.equal(results[3].response?.statusCode, 200);
    const { resource } = await container.item("ok", "q").read();
    assert.equal(resource.n, 1);
  });
});
