// Users, permissions and resource tokens through @azure/cosmos: the
// database's users and their permissions as resources, and clients that
// hold only a permission's token (resourceTokens, permissionFeed) and can
// do exactly what it grants.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";

import { uniqueId, advanceClock, openEbb, closeEbb, expectCosmosError, restRequest } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-perms")));
after(() => closeEbb({ server, client }));

/** A client that holds resource tokens only, no key. */
function tokenClient(options) {
  return new CosmosClient({ endpoint: server.endpoint, connectionPolicy: { requestTimeout: 15_000 }, ...options });
}

async function setup() {
  const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] } });
  await container.items.create({ id: "a", pk: "p", v: 1 });
  await container.items.create({ id: "b", pk: "q", v: 2 });
  const { user } = await database.users.create({ id: uniqueId("u") });
  return { container, user, link: `dbs/${database.id}/colls/${container.id}` };
}

describe("users and permissions", () => {
  test("are resources: create, read, list, query, replace, delete", async () => {
    const { user, link } = await setup();
    const { resource: u } = await user.read();
    assert.ok(u._rid && u._self && u._etag && u._ts && u._permissions === "permissions/");
    const { resources: users } = await database.users.query({ query: "SELECT * FROM r WHERE r.id = @id", parameters: [{ name: "@id", value: u.id }] }).fetchAll();
    assert.deepEqual(users.map((x) => x.id), [u.id]);

    const { resource: p } = await user.permissions.create({ id: "read", permissionMode: "Read", resource: link });
    assert.equal(p.permissionMode, "Read");
    assert.equal(p.resource, link);
    assert.match(p._token, /^type=resource&ver=1\.0&sig=/);
    const { resources: perms } = await user.permissions.readAll().fetchAll();
    assert.deepEqual(perms.map((x) => x.id), ["read"]);
    assert.ok(perms[0]._token);
    const { resource: replaced } = await user.permission("read").replace({ id: "read", permissionMode: "All", resource: link });
    assert.notEqual(replaced._etag, p._etag);

    await expectCosmosError(user.permissions.create({ id: "bad", permissionMode: "Sometimes", resource: link }), 400, { messageIncludes: "permissionMode" });
    await expectCosmosError(user.permissions.create({ id: "bad", permissionMode: "Read", resource: "dbs/nope/colls/none" }), 404);
    await expectCosmosError(user.permissions.create({ id: "read", permissionMode: "Read", resource: link }), 409);

    await user.delete();
    await expectCosmosError(user.read(), 404);
  });

  test("a token for a container reads, writes and queries its items, and nothing else", async () => {
    const { container, user, link } = await setup();
    const { resource: p } = await user.permissions.create({ id: "all", permissionMode: "All", resource: link });
    const tc = tokenClient({ resourceTokens: { [link]: p._token } });
    const c = tc.database(database.id).container(container.id);
    assert.equal((await c.item("a", "p").read()).resource.v, 1);
    await c.items.create({ id: "new", pk: "p" });
    const { resources } = await c.items.query("SELECT VALUE c.id FROM c", { partitionKey: "q" }).fetchAll();
    assert.deepEqual(resources, ["b"]);
    const { resources: all } = await c.items.query("SELECT VALUE c.id FROM c").fetchAll();
    assert.deepEqual(all.sort(), ["a", "b", "new"]);

    tc.dispose();

    // The same token offered for another container, the database and
    // the account's databases (the SDK sends no token where its map has
    // none).
    const other = (await database.containers.create({ id: uniqueId("other"), partitionKey: { paths: ["/pk"] } })).container;
    const otherLink = `dbs/${database.id}/colls/${other.id}`;
    const wide = tokenClient({ resourceTokens: { [link]: p._token, [otherLink]: p._token, [database.id]: p._token, dbs: p._token } });
    const denied = await expectCosmosError(wide.database(database.id).container(other.id).items.create({ id: "x", pk: "p" }), 403);
    assert.match(denied.message, /Insufficient permissions provided in the authorization header/);
    await expectCosmosError(wide.database(database.id).read(), 403);
    wide.dispose();
  });

  test("a Read token reads but may not write; a partition-scoped one sees only its partition", async () => {
    const { container, user, link } = await setup();
    const { resource: r } = await user.permissions.create({ id: "read", permissionMode: "Read", resource: link });
    const { resource: pp } = await user.permissions.create({ id: "p-only", permissionMode: "All", resource: link, resourcePartitionKey: ["p"] });

    const reader = tokenClient({ resourceTokens: { [link]: r._token } });
    const rc = reader.database(database.id).container(container.id);
    assert.equal((await rc.item("b", "q").read()).resource.v, 2);
    await expectCosmosError(rc.items.create({ id: "w", pk: "p" }), 403);
    await expectCosmosError(rc.item("a", "p").delete(), 403);

    const scoped = tokenClient({ resourceTokens: { [link]: pp._token } });
    const sc = scoped.database(database.id).container(container.id);
    assert.equal((await sc.item("a", "p").read()).resource.v, 1);
    await sc.items.upsert({ id: "a", pk: "p", v: 3 });
    await expectCosmosError(sc.item("b", "q").read(), 403);
    await expectCosmosError(sc.items.create({ id: "z", pk: "q" }), 403);
    const { resources } = await sc.items.query("SELECT VALUE c.v FROM c", { partitionKey: "p" }).fetchAll();
    assert.deepEqual(resources, [3]);
    reader.dispose();
    scoped.dispose();
  });

  test("permissionFeed works like resourceTokens", async () => {
    const { container, user, link } = await setup();
    await user.permissions.create({ id: "all", permissionMode: "All", resource: link });
    const { resources: feed } = await user.permissions.readAll().fetchAll();
    const tc = tokenClient({ permissionFeed: feed });
    assert.equal((await tc.database(database.id).container(container.id).item("a", "p").read()).resource.v, 1);
    tc.dispose();
  });

  test("replacing or deleting the permission or the user revokes its tokens at once; tokens expire", async () => {
    const { container, user, link } = await setup();
    const token = async (id) => (await user.permissions.create({ id, permissionMode: "All", resource: link })).resource._token;
    const read = (t) => tokenClient({ resourceTokens: { [link]: t } }).database(database.id).container(container.id).item("a", "p").read();

    const t1 = await token("one");
    await read(t1);
    await user.permission("one").replace({ id: "one", permissionMode: "All", resource: link });
    await expectCosmosError(read(t1), 401, { messageIncludes: "replaced or deleted" });

    const t2 = await token("two");
    await user.permission("two").delete();
    await expectCosmosError(read(t2), 401);

    const t3 = await token("three");
    await user.replace({ id: user.id });
    await expectCosmosError(read(t3), 401);

    // A token valid for 20 s stops working once the server's clock passes it.
    const { resource: short } = await user.permission("three").read({ initialHeaders: { "x-ms-documentdb-expiry-seconds": "20" } });
    await read(short._token);
    await advanceClock(server.endpoint, 21);
    await expectCosmosError(read(short._token), 401, { messageIncludes: "expired" });
    await expectCosmosError(user.permission("three").read({ initialHeaders: { "x-ms-documentdb-expiry-seconds": "18001" } }), 400);
  });

  test("a token cannot be altered, and cannot manage users or call administration", async () => {
    const { container, user, link } = await setup();
    const { resource: p } = await user.permissions.create({ id: "all", permissionMode: "All", resource: link });
    const sig = p._token.slice(p._token.indexOf("sig=") + 4);
    const flipped = p._token.slice(0, -3) + (sig.at(-3) === "A" ? "B" : "A") + p._token.slice(-2);
    const read = (t) => tokenClient({ resourceTokens: { [link]: t } }).database(database.id).container(container.id).item("a", "p").read();
    await expectCosmosError(read(flipped), 401);
    await expectCosmosError(read(p._token.slice(0, -10)), 401);
    const tc = tokenClient({ resourceTokens: { [link]: p._token, [database.id]: p._token } });
    await expectCosmosError(tc.database(database.id).users.readAll().fetchAll(), 403);
    const res = await fetch(`${server.endpoint}_ebb/clock`, { headers: { authorization: encodeURIComponent(p._token), "x-ms-date": new Date().toUTCString() } });
    assert.equal(res.status, 401);
    tc.dispose();
  });
});
