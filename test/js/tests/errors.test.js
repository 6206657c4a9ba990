// Error responses: authentication failures and malformed requests. Every
// error must carry a JSON body {code, message}; the SDK parses it.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { startEbb } from "../lib/server.js";
import { newClient, uniqueId, expectCosmosError, restRequest } from "../lib/cosmos.js";

let server;
let client;
let dbId;
let collId;

before(async () => {
  server = await startEbb();
  client = newClient(server.endpoint);
  dbId = uniqueId("db-errors");
  collId = "c";
  const { database } = await client.databases.create({ id: dbId });
  await database.containers.create({ id: collId, partitionKey: "/pk" });
});

after(async () => {
  client?.dispose();
  await server?.stop();
});

const docsPath = () => `/dbs/${encodeURIComponent(dbId)}/colls/${encodeURIComponent(collId)}/docs`;

describe("authentication", () => {
  test("a client with the wrong key gets 401 with a JSON error body", async () => {
    const wrong = newClient(server.endpoint, randomBytes(64).toString("base64"));
    try {
      const err = await expectCosmosError(wrong.databases.create({ id: uniqueId("db-denied") }), 401);
      assert.equal(err.body?.code, "Unauthorized");
      assert.equal(typeof err.body?.message, "string");
      const err2 = await expectCosmosError(wrong.database(dbId).container(collId).items.readAll().fetchAll(), 401);
      assert.equal(err2.body?.code, "Unauthorized");
    } finally {
      wrong.dispose();
    }
  });

  test("a request without an Authorization header gets 401 with a JSON error body", async () => {
    const res = await fetch(new URL("dbs", server.endpoint), {
      headers: { "x-ms-date": new Date().toUTCString(), "x-ms-version": "2020-07-15" },
    });
    const body = await res.json();
    assert.equal(res.status, 401);
    assert.equal(body.code, "Unauthorized");
    assert.equal(typeof body.message, "string");
  });

  test("a signature over the wrong resource link gets 401", async () => {
    const res = await restRequest(server.endpoint, { method: "GET", path: "/dbs", link: "dbs/other" });
    assert.equal(res.status, 401);
    assert.equal(res.json?.code, "Unauthorized");
  });

  test("a correctly signed raw request succeeds", async () => {
    const res = await restRequest(server.endpoint, { method: "GET", path: `/dbs/${encodeURIComponent(dbId)}` });
    assert.equal(res.status, 200);
    assert.equal(res.json.id, dbId);
  });
});

describe("malformed requests", () => {
  test("creating an item with an invalid JSON body gives 400 with a JSON error body", async () => {
    const res = await restRequest(server.endpoint, {
      method: "POST",
      path: docsPath(),
      rawBody: '{"id": "broken", "pk": ',
      headers: { "x-ms-documentdb-partitionkey": '["p"]' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json?.code, "BadRequest");
    assert.equal(typeof res.json?.message, "string");
  });

  test("creating a database with an invalid JSON body gives 400", async () => {
    const res = await restRequest(server.endpoint, { method: "POST", path: "/dbs", rawBody: "{not json" });
    assert.equal(res.status, 400);
    assert.equal(res.json?.code, "BadRequest");
  });

  test("an item body that is not a JSON object gives 400", async () => {
    const res = await restRequest(server.endpoint, {
      method: "POST",
      path: docsPath(),
      rawBody: "[1, 2, 3]",
      headers: { "x-ms-documentdb-partitionkey": '["p"]' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json?.code, "BadRequest");
  });

  test("an item without an id gives 400", async () => {
    const container = client.database(dbId).container(collId);
    await expectCosmosError(container.items.create({ pk: "p" }, { disableAutomaticIdGeneration: true }), 400);
  });

  test("a query with a syntax error gives 400", async () => {
    const container = client.database(dbId).container(collId);
    await expectCosmosError(container.items.query("SELEKT * FROM c").fetchAll(), 400);
  });

  test("an item that names a property twice gives 400 and stores nothing", async () => {
    // JSON.stringify cannot repeat a name, so the body goes raw.
    const res = await restRequest(server.endpoint, {
      method: "POST",
      path: docsPath(),
      rawBody: '{"id":"dup1","\\u0069d":"dup2","pk":"p"}',
      headers: { "x-ms-documentdb-partitionkey": '["p"]' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json?.code, "BadRequest");
    assert.ok(res.json?.message.includes("Duplicate property name 'id' in the top-level object"), res.json?.message);
    const container = client.database(dbId).container(collId);
    for (const id of ["dup1", "dup2"]) {
      const { statusCode } = await container.item(id, "p").read();
      assert.equal(statusCode, 404, `read ${id}`);
    }
  });

  test("incr that leaves the range of a double gives 400; a whole increment of a fraction adds", async () => {
    const container = client.database(dbId).container(collId);
    await container.items.create({ id: "incr", pk: "p", price: 455.95, big: 1.7e308 });
    const item = container.item("incr", "p");
    const err = await expectCosmosError(item.patch([{ op: "incr", path: "/big", value: 1.7e308 }]), 400, {
      messageIncludes: "1.7e+308 + 1.7e+308 is outside the range of a double",
    });
    assert.equal(err.body?.code, "BadRequest");
    // JSON.stringify writes 10.0 as 10: the increment arrives as an integer.
    const { resource } = await item.patch([{ op: "incr", path: "/price", value: 10.0 }]);
    assert.equal(resource.price, 465.95);
    assert.equal(resource.big, 1.7e308);
  });

  test("reading from a missing container gives 404 with a JSON error body", async () => {
    const err = await expectCosmosError(client.database(dbId).container("no-such-container").read(), 404);
    assert.equal(err.body?.code, "NotFound");
  });
});
