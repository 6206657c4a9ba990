// The change feed through @azure/cosmos's getChangeFeedIterator, in both
// modes: latest version (drain to 304, continue from a token, start from
// now, from a time, one partition) and all versions and deletes (every
// create, replace and delete, TTL purges included, on a container with a
// changeFeedPolicy).

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  ChangeFeedStartFrom,
  ChangeFeedMode,
  ChangeFeedPolicy,
  ChangeFeedRetentionTimeSpan,
  StatusCodes,
  PartitionKeyKind,
  PartitionKeyDefinitionVersion,
} from "@azure/cosmos";

import { uniqueId, advanceClock, openEbb, closeEbb, expectCosmosError } from "../lib/cosmos.js";

let server;
let client;
let database;

before(async () => ({ server, client, database } = await openEbb("db-cf")));
after(() => closeEbb({ server, client }));

async function newContainer(extra = {}) {
  const { container } = await database.containers.create({ id: uniqueId("c"), partitionKey: { paths: ["/pk"] }, ...extra });
  return container;
}

/**
 * Reads an iterator until it answers 304 and returns everything it
 * delivered, checking each page's size against maxItemCount.
 */
async function drain(iterator, maxItemCount) {
  const out = [];
  for (let i = 0; i < 1000; i++) {
    const res = await iterator.readNext();
    if (res.statusCode === StatusCodes.NotModified) {
      assert.equal(res.result.length, 0, "a 304 page is empty");
      assert.ok(res.continuationToken, "a 304 page carries a continuation token");
      return out;
    }
    assert.equal(res.statusCode, 200);
    assert.ok(res.result.length > 0, "a 200 page has items");
    if (maxItemCount !== undefined) assert.ok(res.result.length <= maxItemCount, `page of ${res.result.length} > ${maxItemCount}`);
    out.push(...res.result);
  }
  assert.fail("the change feed never answered 304");
}

describe("latest version", () => {
  test("drains every item once at its latest version, in LSN order, without deletes", async () => {
    const container = await newContainer();
    for (let i = 0; i < 20; i++) await container.items.create({ id: `i${i}`, pk: `p${i % 3}`, v: 1 });
    await container.items.upsert({ id: "i2", pk: "p2", v: 2 });
    await container.item("i5", "p2").patch([{ op: "set", path: "/v", value: 3 }]);
    await container.item("i7", "p1").delete();

    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 4 });
    const items = await drain(it, 4);
    assert.equal(items.length, 19);
    assert.equal(new Set(items.map((d) => d.id)).size, 19, "each item once");
    assert.ok(!items.some((d) => d.id === "i7"), "the deleted item is not delivered");
    const lsns = items.map((d) => d._lsn);
    assert.ok(lsns.every((l) => typeof l === "number"), "items carry _lsn");
    assert.deepEqual(lsns, [...lsns].sort((a, b) => a - b), "in LSN order");
    assert.deepEqual(items.slice(-2).map((d) => [d.id, d.v]), [["i2", 2], ["i5", 3]]);

    // The change feed item is the stored item plus _lsn.
    const { resource } = await container.item("i0", "p0").read();
    const first = { ...items[0] };
    assert.notDeepEqual(first, resource);
    delete first._lsn;
    assert.deepEqual(first, resource);

    // The same iterator continues with what changes next.
    await container.items.create({ id: "late", pk: "p0" });
    const more = await drain(it, 4);
    assert.deepEqual(more.map((d) => d.id), ["late"]);
  });

  test("continues from a continuation token", async () => {
    const container = await newContainer();
    await container.items.create({ id: "a", pk: "x" });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    assert.equal((await drain(it)).length, 1);
    const res = await it.readNext();
    assert.equal(res.statusCode, StatusCodes.NotModified);
    await container.items.create({ id: "b", pk: "y" });
    const resumed = container.items.getChangeFeedIterator({
      changeFeedStartFrom: ChangeFeedStartFrom.Continuation(res.continuationToken),
    });
    assert.deepEqual((await drain(resumed)).map((d) => d.id), ["b"]);
  });

  test("starts from now", async () => {
    const container = await newContainer();
    await container.items.create({ id: "before", pk: "x" });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() });
    assert.equal((await it.readNext()).statusCode, StatusCodes.NotModified);
    await container.items.create({ id: "after", pk: "x" });
    assert.deepEqual((await drain(it)).map((d) => d.id), ["after"]);
  });

  test("starts from a point in time (If-Modified-Since in GMT)", async () => {
    const container = await newContainer();
    await container.items.create({ id: "old", pk: "x" });
    const { now } = await advanceClock(server.endpoint, 10);
    await container.items.create({ id: "new", pk: "x" });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Time(new Date(now)) });
    assert.deepEqual((await drain(it)).map((d) => d.id), ["new"]);
  });

  test("one logical partition", async () => {
    const container = await newContainer();
    for (let i = 0; i < 9; i++) await container.items.create({ id: `i${i}`, pk: ["a", "b", "c"][i % 3] });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("b"), maxItemCount: 2 });
    const items = await drain(it, 2);
    assert.deepEqual(items.map((d) => d.id), ["i1", "i4", "i7"]);
  });

  test("a prefix of a hierarchical key (an EPK sub-range)", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("h"),
      partitionKey: { paths: ["/t", "/u"], version: 2, kind: PartitionKeyKind.MultiHash },
    });
    const keys = [["x", "1"], ["y", "1"], ["x", "2"], ["z", "9"], ["x", "3"]];
    for (const [i, [t, u]] of keys.entries()) await container.items.create({ id: `i${i}`, t, u });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(["x"]) });
    assert.deepEqual((await drain(it)).map((d) => d.id), ["i0", "i2", "i4"]);
    const full = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(["y", "1"]) });
    assert.deepEqual((await drain(full)).map((d) => d.id), ["i1"]);
  });

  test("a continuation whose etag this server never issued is 400 Invalid Continuation Token", async () => {
    const container = await newContainer();
    await container.items.create({ id: "a", pk: "x" });
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const token = (await it.readNext()).continuationToken;
    // The SDK's token is JSON holding the server's etag per range; forge
    // the etag and keep the rest.
    const forged = JSON.parse(token);
    assert.ok(Array.isArray(forged.Continuation) && forged.Continuation.length > 0, `token shape: ${token}`);
    for (const range of forged.Continuation) range.continuationToken = '"not-an-lsn"';
    const resumed = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(JSON.stringify(forged)) });
    await expectCosmosError(resumed.readNext(), 400, { messageIncludes: "Invalid Continuation Token" });
  });

  test("an EPK sub-range of a version 1 container", async () => {
    const { container } = await database.containers.create({
      id: uniqueId("v1"),
      partitionKey: { paths: ["/pk"], version: PartitionKeyDefinitionVersion.V1 },
    });
    // Version 1 EPKs, from the SDK's own hashing test vectors:
    // "aa" 05C1C7…, "" 05C1CF…, "partitionKey" 05C1E1…, "redmond" 05C1EF….
    const keys = ["redmond", "aa", "partitionKey", ""];
    for (const [i, pk] of keys.entries()) await container.items.create({ id: `i${i}`, pk });
    // A feed range is the SDK's own FeedRangeInternal, taken from
    // getFeedRanges, with other bounds.
    const [whole] = await container.getFeedRanges();
    const range = (min, max) => new whole.constructor(min, max);
    const ids = async (r) =>
      (await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(r) }))).map((d) => d.id);
    assert.deepEqual(await ids(range("", "05C1E0")), ["i1", "i3"]);
    assert.deepEqual(await ids(range("05C1E0", "FF")), ["i0", "i2"]);
  });

  test("an expired item is never delivered", async () => {
    const container = await newContainer({ defaultTtl: -1 });
    await container.items.create({ id: "short", pk: "x", ttl: 5 });
    await container.items.create({ id: "long", pk: "x" });
    await advanceClock(server.endpoint, 5);
    const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    assert.deepEqual((await drain(it)).map((d) => d.id), ["long"]);
  });
});

describe("all versions and deletes", () => {
  const avadIterator = (container, extra = {}) =>
    container.items.getChangeFeedIterator({
      changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes,
      changeFeedStartFrom: ChangeFeedStartFrom.Now(),
      ...extra,
    });

  test("records creates, replaces and deletes, TTL purges included", async () => {
    const container = await newContainer({
      defaultTtl: -1,
      changeFeedPolicy: new ChangeFeedPolicy(ChangeFeedRetentionTimeSpan.fromMinutes(5)),
    });
    const it = avadIterator(container);
    assert.equal((await it.readNext()).statusCode, StatusCodes.NotModified);

    await container.items.create({ id: "a", pk: "x", v: 1 });
    await container.item("a", "x").replace({ id: "a", pk: "x", v: 2 });
    await container.items.upsert({ id: "a", pk: "x", v: 3 });
    await container.item("a", "x").delete();
    await container.items.create({ id: "t", pk: "y", ttl: 3 });
    await advanceClock(server.endpoint, 3);

    // The purge happens in the background; read until its record shows.
    const records = [];
    for (let i = 0; i < 500 && !records.some((r) => r.metadata.timeToLiveExpired); i++) {
      const res = await it.readNext();
      if (res.statusCode === 200) records.push(...res.result);
    }
    const summary = records.map((r) => [r.metadata.operationType, (r.current ?? r.previous)?.id ?? r.metadata.id]);
    assert.deepEqual(summary, [
      ["create", "a"],
      ["replace", "a"],
      ["replace", "a"],
      ["delete", "a"],
      ["create", "t"],
      ["delete", "t"],
    ]);
    assert.deepEqual(records.slice(0, 3).map((r) => r.current.v), [1, 2, 3]);
    const lsns = records.map((r) => r.metadata.lsn);
    assert.deepEqual(lsns, [...lsns].sort((a, b) => a - b), "records in LSN order");
    assert.equal(records[1].metadata.previousImageLSN, records[0].metadata.lsn);
    const [explicit, expired] = [records[3].metadata, records[5].metadata];
    assert.equal(explicit.timeToLiveExpired, false);
    assert.equal(explicit.id, "a");
    assert.deepEqual(explicit.partitionKey, { pk: "x" });
    assert.equal(expired.timeToLiveExpired, true);
    assert.deepEqual(expired.partitionKey, { pk: "y" });
    assert.ok(expired.crts > 0);
  });

  test("from the beginning is 400: read from within the retention period", async () => {
    // The service's answer, which the SDK's own tests expect
    // (changeFeedIterator.spec.ts, "startFromBeginning is not supported").
    const container = await newContainer({ changeFeedPolicy: new ChangeFeedPolicy(ChangeFeedRetentionTimeSpan.fromMinutes(5)) });
    await container.items.create({ id: "a", pk: "x" });
    const it = avadIterator(container, { changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    await expectCosmosError(it.readNext(), 400, { messageIncludes: "You must read the change feed from within the retention period." });
  });

  test("is refused on a container without changeFeedPolicy", async () => {
    const container = await newContainer();
    await assert.rejects(avadIterator(container).readNext(), (err) => {
      assert.equal(err.code, 400);
      assert.match(err.message, /changeFeedPolicy\.retentionDuration/);
      return true;
    });
  });
});
