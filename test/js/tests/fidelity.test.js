// Container features the service enforces, through @azure/cosmos: unique
// keys and delete by partition key.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { uniqueId, expectCosmosError, idsOf, openEbb, closeEbb } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-fidelity")));
after(() => closeEbb({ server, client }));

describe("unique keys", () => {
  test("a second item with a held value in the same partition is 409; another partition may hold it", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] },
    });
    const { resource } = await container.read();
    assert.deepEqual(resource.uniqueKeyPolicy, { uniqueKeys: [{ paths: ["/email"] }] });
    await container.items.create({ id: "1", pk: "a", email: "x@example.com" });
    await expectCosmosError(container.items.create({ id: "2", pk: "a", email: "x@example.com" }), 409);
    await expectCosmosError(container.items.upsert({ id: "3", pk: "a", email: "x@example.com" }), 409);
    await container.items.create({ id: "2", pk: "b", email: "x@example.com" });
    // A missing path counts as null: one item per partition may lack it.
    await container.items.create({ id: "4", pk: "a" });
    await expectCosmosError(container.items.create({ id: "5", pk: "a" }), 409);
  });

  test("the policy cannot be changed by a replace", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("c"),
      partitionKey: { paths: ["/pk"] },
      uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] },
    });
    const { resource } = await container.read();
    await expectCosmosError(container.replace({ ...resource, uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/name"] }] } }), 400);
  });
});

describe("delete by partition key", () => {
  test("deleteAllItemsForPartitionKey hides the partition at once and leaves the others", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] } });
    for (const [id, pk] of [["a1", "a"], ["a2", "a"], ["b1", "b"]]) {
      await container.items.create({ id, pk });
    }
    const res = await container.deleteAllItemsForPartitionKey("a");
    assert.equal(res.statusCode, 200);
    const { resources } = await container.items.query("SELECT * FROM c").fetchAll();
    assert.deepEqual(idsOf(resources), ["b1"]);
    const read = await container.item("a1", "a").read();
    assert.equal(read.statusCode, 404, "the SDK reports a missing item as a 404 response, not an error");
    // A new item in the partition is not deleted.
    await container.items.create({ id: "a3", pk: "a" });
    const after = await container.items.query("SELECT * FROM c").fetchAll();
    assert.deepEqual(idsOf(after.resources), ["a3", "b1"]);
  });
});

describe("cross-partition queries through the query plan", () => {
  test("ORDER BY, aggregates and DISTINCT across partitions succeed: the SDK fetches a plan and queries the ranges", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] } });
    for (const [id, pk, n] of [["a", "p", 3], ["b", "q", 1], ["c", "r", 2]]) {
      await container.items.create({ id, pk, n });
    }
    const ordered = await container.items.query("SELECT VALUE c.id FROM c ORDER BY c.n").fetchAll();
    assert.deepEqual(ordered.resources, ["b", "c", "a"]);
    const count = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    assert.deepEqual(count.resources, [3]);
    const distinct = await container.items.query('SELECT DISTINCT VALUE (c.n > 1 ? "big" : "small") FROM c').fetchAll();
    assert.deepEqual(distinct.resources.sort(), ["big", "small"]);
  });
});
