// Helpers shared by the test files: the SDK client, raw signed REST
// requests, the server clock, unique names and assertions.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { ChangeFeedStartFrom, CosmosClient, StatusCodes } from "@azure/cosmos";

import { makeLinkSigner, resourceOf } from "../../../web/static/js/auth.js";
import { EMULATOR_KEY, startEbb } from "./server.js";

export { EMULATOR_KEY, resourceOf };

/**
 * A CosmosClient for the server, configured as a user would configure it
 * for the emulator over plain HTTP. Endpoint discovery stays on (the
 * default), so every request follows the endpoint GET / advertises.
 */
export function newClient(endpoint, key = EMULATOR_KEY, extra = {}) {
  return new CosmosClient({
    endpoint,
    key,
    connectionPolicy: { requestTimeout: 15_000 },
    ...extra,
  });
}

let counter = 0;
/** A name no other test uses: prefix, a counter and a random suffix. */
export function uniqueId(prefix) {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString("hex")}`;
}

// ---------------------------------------------------------------------------
// Raw requests, signed by the explorer's own signer (web/static/js/auth.js)

/**
 * Sends one signed REST request, bypassing the SDK, and returns the status,
 * the headers and the body (parsed when it is JSON).
 *
 * path is the escaped URL path, e.g. `/dbs/${encodeURIComponent(db)}/colls`.
 * body is JSON-encoded unless rawBody is given. The signed resource type
 * and link default to what the path implies (resourceOf); pass type or
 * link to sign something else.
 */
export async function restRequest(endpoint, { method, path, body, rawBody, headers = {}, key = EMULATOR_KEY, type, link }) {
  const derived = resourceOf(path);
  const date = new Date().toUTCString();
  const sign = await makeLinkSigner(key);
  const authorization = await sign(method, type ?? derived.type, link ?? derived.link, date);
  const res = await fetch(new URL(path.replace(/^\//, ""), endpoint), {
    method,
    headers: {
      "x-ms-date": date,
      "x-ms-version": "2020-07-15",
      authorization,
      accept: "application/json",
      ...(body !== undefined || rawBody !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

// ---------------------------------------------------------------------------
// The server clock (--clock-control)

/**
 * POST /_ebb/clock is signed like any two-segment Cosmos path: resource
 * type "_ebb", resource link "_ebb/clock".
 */
async function postClock(endpoint, body, key) {
  const res = await restRequest(endpoint, { method: "POST", path: "/_ebb/clock", body, key, ...resourceOf("/_ebb/clock") });
  if (res.status !== 200 || typeof res.json?.epochSeconds !== "number") {
    throw new Error(`POST /_ebb/clock ${JSON.stringify(body)} answered ${res.status}: ${res.text}`);
  }
  return res.json;
}

/**
 * Moves the server's manual clock forward by `seconds` and returns the new
 * time as `{ now, epochSeconds }`.
 */
export async function advanceClock(endpoint, seconds, key = EMULATOR_KEY) {
  return postClock(endpoint, { advanceSeconds: seconds }, key);
}

/** The server's current time, `{ now, epochSeconds }`. */
export async function serverTime(endpoint) {
  return advanceClock(endpoint, 0);
}

/**
 * Advances the server clock until its whole-second reading is exactly
 * `epochSeconds` (the clock keeps its sub-second part). Item `_ts` values
 * are whole seconds of the same clock, so advanceTo(_ts + ttl - 1) is the
 * last second an item is visible and advanceTo(_ts + ttl) its first second
 * gone.
 */
export async function advanceTo(endpoint, epochSeconds) {
  const { epochSeconds: nowSec } = await serverTime(endpoint);
  assert.ok(
    epochSeconds >= nowSec,
    `advanceTo(${epochSeconds}): the server clock already reads ${nowSec}; tests only move it forward`,
  );
  const after = await advanceClock(endpoint, epochSeconds - nowSec);
  assert.equal(after.epochSeconds, epochSeconds, "server clock after advancing");
  return after;
}

// ---------------------------------------------------------------------------
// Assertions

/**
 * Awaits a promise that must reject with a Cosmos error of the given HTTP
 * status and returns the error. messageIncludes, when given, must appear in
 * the error message (the `message` of the JSON error body).
 */
export async function expectCosmosError(promise, status, { messageIncludes } = {}) {
  let err;
  try {
    const res = await promise;
    assert.fail(`expected a ${status} error, got success: status ${res?.statusCode} ${JSON.stringify(res?.resource)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    err = e;
  }
  assert.equal(err.code, status, `expected status ${status}, got ${err.code}: ${err.message}`);
  if (messageIncludes !== undefined) {
    assert.ok(
      String(err.message).includes(messageIncludes),
      `error message should include ${JSON.stringify(messageIncludes)}\n     got: ${JSON.stringify(err.message)}`,
    );
  }
  return err;
}

/** Sorted ids of a list of documents. */
export function idsOf(docs) {
  return docs.map((d) => d.id).sort();
}

/**
 * Starts a server for a test file, with a client and (given a prefix) a
 * fresh database: `({ server, client, database } = await openEbb("db-x"))`.
 */
export async function openEbb(dbPrefix, { extraArgs = [] } = {}) {
  const server = await startEbb({ extraArgs });
  const client = newClient(server.endpoint);
  let database;
  if (dbPrefix) {
    ({ database } = await client.databases.create({ id: uniqueId(dbPrefix) }));
  }
  return { server, client, database };
}

/** Undoes openEbb. */
export async function closeEbb({ server, client }) {
  client?.dispose();
  await server?.stop();
}

/**
 * Follows a container's change feed from the beginning, keeping each
 * item's latest `v`: `drain()` reads on until the feed has nothing new
 * (304), and `latest` maps each id to the last `v` it delivered.
 */
export function followFeed(container, { maxItemCount = 17 } = {}) {
  const feed = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount });
  const latest = new Map();
  const drain = async () => {
    for (let i = 0; i < 1000; i++) {
      const res = await feed.readNext();
      if (res.statusCode === StatusCodes.NotModified) return;
      for (const d of res.result) latest.set(d.id, d.v);
    }
    throw new Error("the change feed did not run dry in 1,000 pages");
  };
  return { latest, drain };
}

/**
 * Starts `writers` writers that upsert the items `${prefix}${i}` for i
 * below n, each its own share of them in turn, again and again, with
 * `v` counting up from 2 and `extra` added to each document:
 * `writes()` is how many upserts have been acknowledged, `reach(k)`
 * waits until that is k, and `stop()` stops them and waits for them.
 */
export function startWriters(container, { n, prefix, writers = 4, extra = {} }) {
  let stopped = false;
  let writes = 0;
  const running = Array.from({ length: writers }, (_, w) =>
    (async () => {
      for (let v = 2; !stopped; v++) {
        for (let i = w; i < n && !stopped; i += writers) {
          await container.items.upsert({ id: `${prefix}${i}`, pk: `${prefix}${i}`, v, ...extra });
          writes++;
        }
      }
    })(),
  );
  return {
    writes: () => writes,
    reach: async (k) => {
      while (writes < k) await new Promise((r) => setImmediate(r));
    },
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/**
 * Checks a container of the n items `${prefix}${i}` after its ranges
 * were split: an ORDER BY query over the new ranges lists every item
 * once, in order; the change feed that `feed` (followFeed's) follows,
 * read on, ends with every item's last version; and a bulk upsert
 * across the new ranges succeeds.
 */
export async function checkAcrossRanges(container, { n, prefix, feed }) {
  const all = Array.from({ length: n }, (_, i) => `${prefix}${i}`).sort();
  const { resources: ordered } = await container.items.query("SELECT VALUE c.id FROM c ORDER BY c.id", { maxItemCount: 9 }).fetchAll();
  assert.deepEqual(ordered, all);
  await feed.drain();
  const { resources: items } = await container.items.query("SELECT c.id, c.v FROM c").fetchAll();
  assert.equal(items.length, n);
  for (const it of items) assert.equal(feed.latest.get(it.id), it.v, it.id);
  const bulk = await container.items.bulk(items.slice(0, 30).map((it) => ({ operationType: "Upsert", resourceBody: { id: it.id, pk: it.id, v: 0 } })));
  assert.ok(bulk.every((r) => r.statusCode === 200), JSON.stringify(bulk.map((r) => r.statusCode)));
}
