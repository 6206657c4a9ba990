// The Cosmos DB REST client the page uses: the same paths, headers and
// signatures as the SDKs (wire contract §7–§12), plus Ebb's own /_ebb
// endpoints. Every method returns parsed JSON or throws ApiError.

import { partitionKeyHeader } from "./model.js";

const API_VERSION = "2020-07-15";

/** ApiError is a failed request; message is the server's own text. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/**
 * errorText digs the human text out of a Cosmos error message, which
 * wraps it as 'Message: {"Errors":["…"]}\r\nActivityId: …'.
 */
export function errorText(message) {
  if (typeof message !== "string") return "";
  const m = /^Message: (\{[\s\S]*?\})\r?\nActivityId:/.exec(message);
  if (m) {
    try {
      const errors = JSON.parse(m[1]).Errors;
      if (Array.isArray(errors) && errors.length) return errors.join(" ");
    } catch {
      // Not the usual envelope: show the message as it is.
    }
  }
  return message;
}

const enc = encodeURIComponent;

/**
 * throughputHeaders are the headers that provision a new database's or
 * container's throughput (see model.js provisionedThroughput): manual
 * RU/s in x-ms-offer-throughput, an autoscale maximum as JSON in
 * x-ms-cosmos-offer-autopilot-settings; none for null.
 */
export function throughputHeaders(throughput) {
  if (throughput?.autoscaleMax) return { "x-ms-cosmos-offer-autopilot-settings": JSON.stringify({ maxThroughput: throughput.autoscaleMax }) };
  if (throughput?.manual) return { "x-ms-offer-throughput": String(throughput.manual) };
  return {};
}

/** The list in a feed of each kind of script (sprocs, triggers, udfs). */
const SCRIPT_FEEDS = { sprocs: "StoredProcedures", triggers: "Triggers", udfs: "UserDefinedFunctions" };

/**
 * scriptLog decodes x-ms-documentdb-script-log-results: what a stored
 * procedure wrote with console.log, URL-encoded; "" when there is none.
 * A header that is not valid percent-encoding is shown as it came.
 */
export function scriptLog(header) {
  if (!header) return "";
  try {
    return decodeURIComponent(header);
  } catch {
    return header;
  }
}

/** Paths of the resources the page uses (escaped, as sent and signed). */
export const paths = {
  databases: () => "/dbs",
  database: (db) => `/dbs/${enc(db)}`,
  containers: (db) => `/dbs/${enc(db)}/colls`,
  container: (db, coll) => `/dbs/${enc(db)}/colls/${enc(coll)}`,
  items: (db, coll) => `/dbs/${enc(db)}/colls/${enc(coll)}/docs`,
  pkranges: (db, coll) => `/dbs/${enc(db)}/colls/${enc(coll)}/pkranges`,
  item: (db, coll, id) => `/dbs/${enc(db)}/colls/${enc(coll)}/docs/${enc(id)}`,
  scripts: (db, coll, kind) => `/dbs/${enc(db)}/colls/${enc(coll)}/${kind}`,
  script: (db, coll, kind, id) => `/dbs/${enc(db)}/colls/${enc(coll)}/${kind}/${enc(id)}`,
  partitionKeyDelete: (db, coll) => `/dbs/${enc(db)}/colls/${enc(coll)}/operations/partitionkeydelete`,
  offers: () => "/offers",
  offer: (id) => `/offers/${enc(id)}`,
  clock: () => "/_ebb/clock",
  ttlStats: (db, coll) => `/_ebb/containers/${enc(db)}/${enc(coll)}/ttl`,
  partitionDeletes: (db, coll) => `/_ebb/containers/${enc(db)}/${enc(coll)}/partitiondeletes`,
};

/** Client signs and sends requests with one master key, or sends them
 * with one resource token (auth.js makes either signer). */
export class Client {
  /** sign is async (verb, escapedPath, date) => Authorization value. */
  constructor(sign) {
    this.sign = sign;
  }

  /**
   * request sends one signed request and returns {body, headers, charge}.
   * body is sent as JSON (contentType overrides the type).
   */
  async request(verb, path, { body, headers = {}, contentType = "application/json" } = {}) {
    const date = new Date().toUTCString();
    const all = {
      accept: "application/json",
      "x-ms-date": date,
      "x-ms-version": API_VERSION,
      authorization: await this.sign(verb, path, date),
      ...headers,
    };
    if (body !== undefined) all["content-type"] = contentType;
    let res;
    try {
      res = await fetch(path, { method: verb, headers: all, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
    } catch (e) {
      throw new ApiError(0, "NetworkError", `The server could not be reached (${e.message}).`);
    }
    const text = await res.text();
    let data;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!res.ok) {
      const message = errorText(data?.message) || `${res.status} ${res.statusText}`.trim();
      throw new ApiError(res.status, data?.code ?? "", message);
    }
    return { body: data, headers: res.headers, charge: Number(res.headers.get("x-ms-request-charge")) || 0 };
  }

  /** query runs a SQL query against a feed path, one page at a time. */
  async query(path, query, { continuation, maxItemCount, metrics = false, extraHeaders = {} } = {}) {
    const headers = {
      "x-ms-documentdb-isquery": "true",
      "x-ms-documentdb-query-enablecrosspartition": "true",
      ...extraHeaders,
    };
    if (maxItemCount) headers["x-ms-max-item-count"] = String(maxItemCount);
    if (continuation) headers["x-ms-continuation"] = continuation;
    if (metrics) headers["x-ms-documentdb-populatequerymetrics"] = "true";
    const res = await this.request("POST", path, { body: { query }, headers, contentType: "application/query+json" });
    return {
      body: res.body,
      charge: res.charge,
      continuation: res.headers.get("x-ms-continuation") || null,
      metrics: res.headers.get("x-ms-documentdb-query-metrics") || "",
    };
  }

  account() {
    return this.request("GET", "/");
  }

  async databases() {
    return (await this.request("GET", paths.databases())).body.Databases ?? [];
  }

  /** createDatabase creates a database; throughput is null (none
   * shared), {manual} or {autoscaleMax}. */
  async createDatabase(id, throughput) {
    return (await this.request("POST", paths.databases(), { body: { id }, headers: throughputHeaders(throughput) })).body;
  }

  async database(db) {
    return (await this.request("GET", paths.database(db))).body;
  }

  deleteDatabase(db) {
    return this.request("DELETE", paths.database(db));
  }

  async containers(db) {
    return (await this.request("GET", paths.containers(db))).body.DocumentCollections ?? [];
  }

  async container(db, coll) {
    return (await this.request("GET", paths.container(db, coll))).body;
  }

  /** createContainer creates a container; throughput is null (the
   * database's), {manual} or {autoscaleMax}. */
  async createContainer(db, definition, throughput) {
    return (await this.request("POST", paths.containers(db), { body: definition, headers: throughputHeaders(throughput) })).body;
  }

  /** replaceContainer PUTs the full body; etag guards against a lost update. */
  async replaceContainer(db, coll, body, etag) {
    const headers = etag ? { "If-Match": etag } : {};
    return (await this.request("PUT", paths.container(db, coll), { body, headers })).body;
  }

  deleteContainer(db, coll) {
    return this.request("DELETE", paths.container(db, coll));
  }

  /** offerFor finds the offer (throughput) of a resource by its _rid;
   * null when it has none. */
  async offerFor(rid) {
    const sql = `SELECT * FROM root r WHERE r.offerResourceId = ${JSON.stringify(rid)}`;
    const res = await this.query(paths.offers(), sql);
    return res.body?.Offers?.[0] ?? null;
  }

  /** databaseOffer is a database's own (shared) offer; null when it has
   * none. */
  async databaseOffer(db) {
    return this.offerFor((await this.database(db))._rid);
  }

  async replaceOffer(offer) {
    return (await this.request("PUT", paths.offer(offer.id), { body: offer })).body;
  }

  /**
   * queryItems runs a query over a container's items. A cross-partition
   * query goes to the container's partition key range, as the SDKs that
   * fetch a query plan send it: without one, the service (and Ebb)
   * refuses a query whose results need merging (ORDER BY, aggregates,
   * DISTINCT, ...) with 400/1004. Ebb has one range, so the page's query
   * runs there whole.
   */
  async queryItems(db, coll, sql, options = {}) {
    const extraHeaders = { ...(options.extraHeaders ?? {}) };
    if (!("x-ms-documentdb-partitionkey" in extraHeaders)) {
      const ranges = await this.partitionKeyRanges(db, coll);
      if (ranges.length === 1) extraHeaders["x-ms-documentdb-partitionkeyrangeid"] = ranges[0].id;
    }
    return this.query(paths.items(db, coll), sql, { ...options, extraHeaders });
  }

  /** partitionKeyRanges lists a container's ranges (cached: they never
   * change on Ebb). */
  async partitionKeyRanges(db, coll) {
    this.ranges ??= new Map();
    const key = paths.pkranges(db, coll);
    if (!this.ranges.has(key)) {
      const res = await this.request("GET", key);
      this.ranges.set(key, res.body?.PartitionKeyRanges ?? []);
    }
    return this.ranges.get(key);
  }

  /** item reads one item; pk is its partition key values. */
  async item(db, coll, id, pk) {
    const headers = { "x-ms-documentdb-partitionkey": partitionKeyHeader(pk) };
    return (await this.request("GET", paths.item(db, coll, id), { headers })).body;
  }

  /** createItem POSTs a new item; pk is its partition key values. */
  async createItem(db, coll, item, pk) {
    const headers = { "x-ms-documentdb-partitionkey": partitionKeyHeader(pk) };
    return (await this.request("POST", paths.items(db, coll), { body: item, headers })).body;
  }

  async replaceItem(db, coll, id, item, pk, etag) {
    const headers = { "x-ms-documentdb-partitionkey": partitionKeyHeader(pk) };
    if (etag) headers["If-Match"] = etag;
    return (await this.request("PUT", paths.item(db, coll, id), { body: item, headers })).body;
  }

  deleteItem(db, coll, id, pk) {
    const headers = { "x-ms-documentdb-partitionkey": partitionKeyHeader(pk) };
    return this.request("DELETE", paths.item(db, coll, id), { headers });
  }

  /**
   * deletePartition deletes every item of one logical partition (pk: all
   * its values, one per partition key path). The items are gone from
   * reads when it returns; the server deletes them in the background.
   */
  deletePartition(db, coll, pk) {
    const headers = { "x-ms-documentdb-partitionkey": partitionKeyHeader(pk) };
    return this.request("POST", paths.partitionKeyDelete(db, coll), { headers });
  }

  /** partitionDeletes lists a container's deletes by partition key still
   * in progress: [{partitionKey, requestedAt, remainingItems,
   * remainingCapped?}]. */
  async partitionDeletes(db, coll) {
    return (await this.request("GET", paths.partitionDeletes(db, coll))).body?.partitionKeyDeletes ?? [];
  }

  /** scripts lists a container's scripts of one kind: "sprocs",
   * "triggers" or "udfs". */
  async scripts(db, coll, kind) {
    return (await this.request("GET", paths.scripts(db, coll, kind))).body?.[SCRIPT_FEEDS[kind]] ?? [];
  }

  /** createScript POSTs a new script: {id, body} (a trigger also has
   * triggerType and triggerOperation). A body that does not compile is
   * refused with 400. */
  async createScript(db, coll, kind, script) {
    return (await this.request("POST", paths.scripts(db, coll, kind), { body: script })).body;
  }

  /** replaceScript PUTs a script's full body; etag guards against a
   * lost update. */
  async replaceScript(db, coll, kind, id, script, etag) {
    const headers = etag ? { "If-Match": etag } : {};
    return (await this.request("PUT", paths.script(db, coll, kind, id), { body: script, headers })).body;
  }

  deleteScript(db, coll, kind, id) {
    return this.request("DELETE", paths.script(db, coll, kind, id));
  }

  /**
   * executeStoredProcedure runs a stored procedure in the logical
   * partition pk (all its values) with args, a JSON array. It always
   * asks for the script's log, and returns {body, charge, log}: the
   * body the procedure set (the service answers "" when it set none)
   * and what it wrote with console.log.
   */
  async executeStoredProcedure(db, coll, id, pk, args) {
    const headers = {
      "x-ms-documentdb-partitionkey": partitionKeyHeader(pk),
      "x-ms-documentdb-script-enable-logging": "true",
    };
    const res = await this.request("POST", paths.script(db, coll, "sprocs", id), { body: args, headers });
    return { body: res.body, charge: res.charge, log: scriptLog(res.headers.get("x-ms-documentdb-script-log-results")) };
  }

  /** clock reads the manual clock: {now, epochSeconds}; 404 when off. */
  async clock() {
    return (await this.request("GET", paths.clock())).body;
  }

  async advanceClock(seconds) {
    return (await this.request("POST", paths.clock(), { body: { advanceSeconds: seconds } })).body;
  }

  async ttlStats(db, coll) {
    return (await this.request("GET", paths.ttlStats(db, coll))).body;
  }
}
