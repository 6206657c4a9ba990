// Account keys through @azure/cosmos: a read-only key reads and queries,
// and every write with it is refused with 401; the secondary key writes.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";

import { startEbb } from "../lib/server.js";
import { newClient, uniqueId, expectCosmosError } from "../lib/cosmos.js";

const SECONDARY = "c2Vjb25kYXJ5LWtleS1mb3ItdGVzdHMtc3Nzc3Nzc3Nzcw==";
const READ_ONLY = "cmVhZC1vbmx5LWtleS1mb3ItdGVzdHMtcnJycnJycnJycnI=";

let server;
let admin;
let readOnly;
let secondary;

before(async () => {
  server = await startEbb({ extraArgs: ["--secondary-key", SECONDARY, "--readonly-key", READ_ONLY] });
  admin = newClient(server.endpoint);
  readOnly = newClient(server.endpoint, READ_ONLY);
  secondary = newClient(server.endpoint, SECONDARY);
});

after(async () => {
  for (const c of [admin, readOnly, secondary]) c?.dispose();
  await server?.stop();
});

describe("keys", () => {
  test("a read-only key reads, queries and reads feeds; its writes are 401", async () => {
    const dbId = uniqueId("db-keys");
    const { database } = await admin.databases.create({ id: dbId });
    const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "a", pk: "p" });

    const ro = readOnly.database(dbId).container("c");
    const { resource } = await ro.item("a", "p").read();
    assert.equal(resource.id, "a");
    const { resources } = await ro.items.query("SELECT * FROM c").fetchAll();
    assert.equal(resources.length, 1);
    const { resources: feed } = await ro.items.readAll().fetchAll();
    assert.equal(feed.length, 1);

    await expectCosmosError(ro.items.create({ id: "b", pk: "p" }), 401);
    await expectCosmosError(ro.items.upsert({ id: "a", pk: "p", v: 2 }), 401);
    await expectCosmosError(ro.item("a", "p").replace({ id: "a", pk: "p", v: 2 }), 401);
    await expectCosmosError(ro.item("a", "p").patch([{ op: "add", path: "/v", value: 2 }]), 401);
    await expectCosmosError(ro.item("a", "p").delete(), 401);
    await expectCosmosError(readOnly.databases.create({ id: uniqueId("db-ro") }), 401);

    const { resource: after } = await container.item("a", "p").read();
    assert.equal(after.v, undefined, "a refused write changed the item");

    await secondary.database(dbId).container("c").items.upsert({ id: "s", pk: "p" });
  });
});
