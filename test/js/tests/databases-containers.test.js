// Databases, containers and offers through @azure/cosmos.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { startEbb } from "../lib/server.js";
import { newClient, uniqueId, expectCosmosError } from "../lib/cosmos.js";

let server;
let client;

before(async () => {
  server = await startEbb();
  client = newClient(server.endpoint);
});

after(async () => {
  client?.dispose();
  await server?.stop();
});

describe("databases", () => {
  test("create returns 201 with the id and system properties, read returns 200", async () => {
    const id = uniqueId("db");
    const created = await client.databases.create({ id });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    for (const prop of ["_rid", "_self", "_etag", "_ts"]) {
      assert.ok(created.resource[prop] !== undefined, `created database has ${prop}`);
    }

    const read = await created.database.read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.id, id);
    assert.equal(read.resource._rid, created.resource._rid);
  });

  test("creating a database twice gives 409", async () => {
    const id = uniqueId("db");
    await client.databases.create({ id });
    await expectCosmosError(client.databases.create({ id }), 409);
  });

  test("readAll lists and query finds created databases", async () => {
    const a = uniqueId("db-list");
    const b = uniqueId("db-list");
    await client.databases.create({ id: a });
    await client.databases.create({ id: b });

    const { resources: all } = await client.databases.readAll().fetchAll();
    const ids = all.map((d) => d.id);
    assert.ok(ids.includes(a) && ids.includes(b), `readAll returned ${JSON.stringify(ids)}`);

    const { resources: found } = await client.databases
      .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: b }] })
      .fetchAll();
    assert.deepEqual(
      found.map((d) => d.id),
      [b],
    );
  });

  test("delete returns 204 and a later read gives 404", async () => {
    const id = uniqueId("db");
    const { database } = await client.databases.create({ id });
    const del = await database.delete();
    assert.equal(del.statusCode, 204);
    await expectCosmosError(database.read(), 404);
  });

  test("deleting a database removes its containers and items", async () => {
    const id = uniqueId("db");
    const { database } = await client.databases.create({ id });
    const { container } = await database.containers.create({ id: "c", partitionKey: "/pk" });
    await container.items.create({ id: "x", pk: "p" });
    await database.delete();
    await client.databases.create({ id });
    const { resources } = await client.database(id).containers.readAll().fetchAll();
    assert.deepEqual(resources, []);
  });

  test("a database created with throughput has an offer; one without has none", async () => {
    const withOffer = await client.databases.create({ id: uniqueId("db-tp"), throughput: 400 });
    const offer = await withOffer.database.readOffer();
    assert.equal(offer.resource?.content?.offerThroughput, 400);

    const without = await client.databases.create({ id: uniqueId("db-notp") });
    const none = await without.database.readOffer();
    assert.equal(none.resource, undefined);
  });
});

describe("containers", () => {
  let database;
  before(async () => {
    ({ database } = await client.databases.create({ id: uniqueId("db-containers") }));
  });

  test("create with a partition key path returns 201 and echoes it with kind Hash", async () => {
    const id = uniqueId("c");
    const created = await database.containers.create({ id, partitionKey: { paths: ["/pk"] } });
    assert.equal(created.statusCode, 201);
    assert.equal(created.resource.id, id);
    assert.deepEqual(created.resource.partitionKey.paths, ["/pk"]);
    assert.equal(created.resource.partitionKey.kind, "Hash");
    assert.ok(created.resource._rid && created.resource._self, "container has _rid and _self");
    assert.equal(created.resource.indexingPolicy?.indexingMode, "consistent");

    const read = await created.container.read();
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.resource.partitionKey.paths, ["/pk"]);
  });

  test("creating a container twice gives 409", async () => {
    const id = uniqueId("c");
    await database.containers.create({ id, partitionKey: "/pk" });
    await expectCosmosError(database.containers.create({ id, partitionKey: "/pk" }), 409);
  });

  test("readAll and query list the containers of a database", async () => {
    const { database: db } = await client.databases.create({ id: uniqueId("db-list-c") });
    await db.containers.create({ id: "one", partitionKey: "/pk" });
    await db.containers.create({ id: "two", partitionKey: "/pk" });

    const { resources: all } = await db.containers.readAll().fetchAll();
    assert.deepEqual(all.map((c) => c.id).sort(), ["one", "two"]);

    const { resources: found } = await db.containers
      .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: "two" }] })
      .fetchAll();
    assert.deepEqual(
      found.map((c) => c.id),
      ["two"],
    );
  });

  test("delete returns 204 and a later read gives 404", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: "/pk" });
    const del = await container.delete();
    assert.equal(del.statusCode, 204);
    await expectCosmosError(container.read(), 404);
  });

  test("a container created without a partition key gets /_partitionKey", async () => {
    const { resource, container } = await database.containers.create({ id: uniqueId("c-nopk") });
    assert.deepEqual(resource.partitionKey.paths, ["/_partitionKey"]);
    assert.equal(resource.partitionKey.kind, "Hash");
    const read = await container.read();
    assert.deepEqual(read.resource.partitionKey.paths, ["/_partitionKey"]);
  });

  test("items without the /_partitionKey property live in the None partition", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c-nopk") });

    const created = await container.items.create({ id: "a", value: 1 });
    assert.equal(created.statusCode, 201);
    await container.items.create({ id: "b", value: 2 });

    const read = await container.item("a").read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.value, 1);

    const replaced = await container.item("a").replace({ id: "a", value: 10 });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.resource.value, 10);

    const { resources } = await container.items.query("SELECT * FROM root r").fetchAll();
    assert.deepEqual(resources.map((d) => d.id).sort(), ["a", "b"]);

    const del = await container.item("b").delete();
    assert.equal(del.statusCode, 204);
    const gone = await container.item("b").read();
    assert.equal(gone.statusCode, 404);
  });

  test("replace keeps the partition key and round-trips the indexing policy", async () => {
    const id = uniqueId("c");
    const { container, resource } = await database.containers.create({ id, partitionKey: "/pk" });
    const indexingPolicy = { indexingMode: "consistent", automatic: true, includedPaths: [{ path: "/a/?" }], excludedPaths: [{ path: "/*" }] };
    const replaced = await container.replace({ id, partitionKey: resource.partitionKey, indexingPolicy });
    assert.equal(replaced.statusCode, 200);
    const { resource: read } = await container.read();
    assert.deepEqual(read.indexingPolicy.includedPaths.map((p) => p.path), ["/a/?"]);
    assert.deepEqual(read.partitionKey.paths, ["/pk"]);
  });

  test("readOffer and offer.replace change a container's throughput from 400 to 500", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c-tp"), partitionKey: "/pk", throughput: 400 });

    const before = await container.readOffer();
    assert.ok(before.resource, "the container has an offer");
    assert.equal(before.resource.content.offerThroughput, 400);
    assert.equal(before.resource.offerResourceId, (await container.read()).resource._rid);

    const replaced = await before.offer.replace({
      ...before.resource,
      content: { ...before.resource.content, offerThroughput: 500 },
    });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.resource.content.offerThroughput, 500);

    const after = await container.readOffer();
    assert.equal(after.resource.content.offerThroughput, 500);
  });

  test("read with populateQuotaInfo: the quota, the usage and the index transformation progress", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c-quota"), partitionKey: "/pk" });
    for (let i = 0; i < 7; i++) await container.items.create({ id: `i${i}`, pk: "p" });
    await container.item("i0", "p").delete();
    const { headers } = await container.read({ populateQuotaInfo: true });
    assert.match(headers["x-ms-resource-quota"], /^functions=25;storedProcedures=100;triggers=25;documentSize=\d+;documentsSize=\d+;documentsCount=-1;collectionSize=\d+;$/);
    // documentsSize and collectionSize are KB, documentSize MB, rounded down.
    const { resources } = await container.items.readAll().fetchAll();
    const kb = Math.floor(resources.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0) / 1024);
    assert.equal(
      headers["x-ms-resource-usage"],
      `functions=0;storedProcedures=0;triggers=0;documentSize=0;documentsSize=${kb};documentsCount=6;collectionSize=${kb};`,
    );
    assert.equal(headers["x-ms-documentdb-collection-index-transformation-progress"], "100");
  });

  test("an address that cannot be an offer's is 400; a missing offer is 404", async () => {
    await expectCosmosError(client.offer("not-an-offer").read(), 400, { messageIncludes: "Invalid resource id" });
    await expectCosmosError(client.offer("AAAA").read(), 404);
  });

  test("a container created without throughput gets a 400 RU/s offer", async () => {
    const { container } = await database.containers.create({ id: uniqueId("c-default-tp"), partitionKey: "/pk" });
    const offer = await container.readOffer();
    assert.equal(offer.resource?.content?.offerThroughput, 400);
  });
});

describe("conflicts", () => {
  test("a single-region account has none: empty feed and query, 404 by id", async () => {
    const { database } = await client.databases.create({ id: uniqueId("db-conflicts") });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });

    const { resources: all } = await container.conflicts.readAll().fetchAll();
    assert.deepEqual(all, []);
    const { resources: found } = await container.conflicts
      .query({ query: "SELECT * FROM c WHERE c.id = @id", parameters: [{ name: "@id", value: "x" }] })
      .fetchAll();
    assert.deepEqual(found, []);
    await expectCosmosError(container.conflict("x").read(), 404);
    await expectCosmosError(container.conflict("x").delete(), 404);
  });
});

describe("server-side scripts", () => {
  test("stored procedures, triggers and functions are kept, and the replaced procedure runs", async () => {
    const { database } = await client.databases.create({ id: uniqueId("db-scripts") });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    const scripts = container.scripts;

    const { resource: sp } = await scripts.storedProcedures.create({
      id: "hello",
      body: "function (name) { getContext().getResponse().setBody('hello ' + name); }",
    });
    assert.equal(sp.id, "hello");
    assert.ok(sp._rid && sp._etag && sp._self.includes("/sprocs/"));
    const { resources: procs } = await scripts.storedProcedures.readAll().fetchAll();
    assert.deepEqual(procs.map((p) => p.id), ["hello"]);
    const { resource: read } = await scripts.storedProcedure("hello").read();
    assert.equal(read.body, sp.body);
    assert.equal((await scripts.storedProcedure("hello").execute("p", ["x"])).resource, "hello x");
    const { resource: replaced } = await scripts.storedProcedure("hello").replace({ id: "hello", body: "function () {}" });
    assert.notEqual(replaced._etag, sp._etag);
    assert.equal((await scripts.storedProcedure("hello").execute("p", ["x"])).resource, "");
    await expectCosmosError(scripts.storedProcedures.create({ id: "bad", body: "function ( {" }), 400);

    const { resource: trigger } = await scripts.triggers.create({
      id: "stamp",
      body: "function () {}",
      triggerType: "Pre",
      triggerOperation: "Create",
    });
    assert.equal(trigger.triggerType, "Pre");
    const { resource: udf } = await scripts.userDefinedFunctions.create({ id: "tax", body: "function tax(x) { return x * 0.2; }" });
    assert.equal(udf.id, "tax");
    await scripts.userDefinedFunction("tax").delete();
    await expectCosmosError(scripts.userDefinedFunction("tax").read(), 404);
  });
});
