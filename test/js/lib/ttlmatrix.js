// The Time-To-Live contract's data file, testdata/ttl/matrix, and a
// runner for it through @azure/cosmos: the JavaScript twin of the Go
// package test/ttlmatrix, which the file's header describes. Each
// directive's output must be the file's expected output, word for word.

import assert from "node:assert/strict";

import { advanceClock, restRequest, serverTime } from "./cosmos.js";
import { argValue, setting } from "./ttldata.js";

export { readMatrix } from "./ttldata.js";

/**
 * errorText takes the text out of a Cosmos error message, which wraps it
 * as `Message: {"Errors":["<text>"]}` and more.
 */
export function errorText(message) {
  const m = /\{"Errors":(\[.*?\])\}/s.exec(String(message));
  if (!m) return String(message);
  try {
    return JSON.parse(m[1])[0];
  } catch {
    return String(message);
  }
}

const SELECTS = ["SELECT * FROM c", "SELECT * FROM c ORDER BY c.id"];

/**
 * MatrixRunner runs the file's directives, one at a time and in order,
 * against a server (started with --disable-purger) through a client.
 */
export class MatrixRunner {
  constructor({ endpoint, client }) {
    this.endpoint = endpoint;
    this.client = client;
    this.n = 0;
    this.c = null;
  }

  /** do runs directive d and returns its output. */
  async do(d) {
    switch (d.cmd) {
      case "default-ttl":
        return this.defaultTtl(argValue(d, "value"));
      case "item-ttl":
        return this.itemTtl(argValue(d, "value"));
      case "expiry":
        return this.expiry(d);
      case "container": {
        const { container, result } = await this.fresh(props(d));
        if (result.status === 201) {
          this.c = container;
          this.t0 = (await serverTime(this.endpoint)).epochSeconds;
          this.ids = [];
          this.etags = new Map();
        }
        return show(result);
      }
      case "advance":
        await advanceClock(this.endpoint, Number([...d.args.keys()][0]));
        return "";
    }
    assert.ok(this.c, `${d.pos}: ${d.cmd} before any container`);
    if (d.cmd === "visible") {
      const ids = await this.visible(d.pos);
      return ids.length ? ids.join(" ") : "none";
    }
    if (d.cmd === "replace-container") return show(await this.c.replace(props(d)));
    const id = d.args.get("id")?.[0];
    assert.ok(id, `${d.pos}: ${d.cmd} needs id=`);
    if (!this.ids.includes(id)) this.ids.push(id);
    const ifMatch = d.args.has("if-match") ? this.etags.get(id) : undefined;
    const ttl = argValue(d, "ttl");
    switch (d.cmd) {
      case "create":
      case "upsert":
      case "replace":
        return this.showItem(await this.c.write(d.cmd, id, item(id, ttl), ifMatch));
      case "patch":
        return this.showItem(
          await this.c.patch(id, ttl === undefined ? "/touched" : "/ttl", ttl === undefined ? true : ttl, ifMatch),
        );
      case "delete":
        return this.showItem(await this.c.delete(id, ifMatch));
      case "read": {
        const res = await this.c.read(id);
        let out = this.showItem(res);
        if (res.status === 200 && res.body.ttl !== undefined) out += ` ttl=${JSON.stringify(res.body.ttl)}`;
        return out;
      }
    }
    throw new Error(`${d.pos}: unknown directive ${d.cmd}`);
  }

  async fresh(p) {
    this.n += 1;
    return Container.create(this, `m${this.n}`, p);
  }

  showItem(res) {
    let out = show(res);
    if (res.status >= 200 && res.status < 300 && res.body) {
      this.etags.set(res.body.id, res.body._etag);
      const d = res.body._ts - this.t0;
      out += ` _ts=${d >= 0 ? "+" : ""}${d}`;
    }
    return out;
  }

  async defaultTtl(value) {
    const outcome = async (container, result, ok) => (result.status === ok ? setting(await container.defaultTtl()) : show(result));
    let { container, result } = await this.fresh({ defaultTtl: value });
    const created = await outcome(container, result, 201);
    ({ container, result } = await this.fresh({ defaultTtl: 5 }));
    assert.equal(result.status, 201, "create a container with defaultTtl 5");
    let replaced = await outcome(container, await container.replace({ defaultTtl: value }), 200);
    const after = setting(await container.defaultTtl());
    if (replaced !== after && after !== "On 5 s") replaced += `, yet the container now reads ${after}`;
    return created === replaced ? created : `create: ${created}\nreplace: ${replaced}`;
  }

  async itemTtl(value) {
    const lines = [];
    for (const [name, defaultTtl] of [
      ["TTL on", -1],
      ["TTL off", undefined],
    ]) {
      const { container: c, result } = await this.fresh({ defaultTtl });
      assert.equal(result.status, 201, `create a container with defaultTtl ${defaultTtl}`);
      for (const id of ["replace", "patch"]) assert.equal((await c.write("create", id, item(id))).status, 201);
      const got = {
        create: await c.write("create", "create", item("create", value)),
        upsert: await c.write("upsert", "upsert", item("upsert", value)),
        replace: await c.write("replace", "replace", item("replace", value)),
        patch: await c.patch("patch", "/ttl", value),
      };
      const outcomes = {};
      for (const [kind, res] of Object.entries(got)) outcomes[kind] = await accepted(c, kind, value, res);
      const all = outcomes.create;
      if (Object.values(outcomes).every((o) => o === all)) {
        lines.push(`${name}: ${all}`);
      } else {
        lines.push(`${name}: ${Object.entries(outcomes).map(([k, o]) => `${k} ${o}`).join("; ")}`);
      }
    }
    return lines.join("\n");
  }

  async expiry(d) {
    const at = d.args.get("at");
    assert.ok(at, `${d.pos}: expiry needs at=(seconds, ...)`);
    const { container, result } = await this.fresh({ defaultTtl: argValue(d, "defaultTtl") });
    assert.equal(result.status, 201, `${d.pos}: create container`);
    this.c = container;
    this.ids = ["item"];
    this.etags = new Map();
    const created = await container.write("create", "item", item("item", argValue(d, "ttl")));
    assert.equal(created.status, 201, `${d.pos}: create item: ${JSON.stringify(created)}`);
    const out = [];
    for (const s of at) {
      const { epochSeconds } = await serverTime(this.endpoint);
      await advanceClock(this.endpoint, created.body._ts + Number(s) - epochSeconds);
      const state = (await this.visible(d.pos)).length === 1 ? "visible" : "gone";
      out.push(`_ts+${s} ${state}`);
    }
    this.c = null;
    return out.join("\n");
  }

  /**
   * visible returns the ids every read path finds, sorted: point reads of
   * the ids written, the queries, COUNT, readAll() and the REST read feed
   * (GET …/docs, which readAll() does not use). It fails if they disagree.
   */
  async visible(pos) {
    const read = [];
    for (const id of this.ids) {
      const res = await this.c.read(id);
      assert.ok(res.status === 200 || res.status === 404, `${pos}: read ${id}: ${JSON.stringify(res)}`);
      if (res.status === 200) read.push(id);
    }
    read.sort();
    const paths = { "point reads": read };
    for (const sql of SELECTS) paths[sql] = (await this.c.query(sql)).map((d) => d.id);
    paths["SELECT * FROM c"].sort();
    paths["readAll()"] = (await this.c.readAll()).map((d) => d.id).sort();
    paths["GET …/docs"] = (await this.c.readFeed()).map((d) => d.id).sort();
    const count = await this.c.query("SELECT VALUE COUNT(1) FROM c");
    for (const ids of Object.values(paths)) {
      assert.deepEqual(
        { ids, count },
        { ids: read, count: [read.length] },
        `${pos}: read paths disagree: ${JSON.stringify(paths)}; SELECT VALUE COUNT(1) FROM c: ${JSON.stringify(count)}`,
      );
    }
    return read;
  }
}

/** The item bodies of the file: id, pk "p" and ttl, if any. */
function item(id, ttl) {
  return ttl === undefined ? { id, pk: "p" } : { id, pk: "p", ttl };
}

function props(d) {
  return { defaultTtl: argValue(d, "defaultTtl"), indexingNone: d.args.get("indexing")?.[0] === "none" };
}

/** show prints a result: the status, and a 400's message. */
function show(res) {
  return res.status === 400 ? `400 ${res.message}` : String(res.status);
}

/**
 * accepted says whether a write of ttl value succeeded and the item reads
 * back with that ttl, or how the write failed. Items are named after the
 * write: create and upsert make a new one, replace and patch change one
 * without ttl, which a failed write must leave alone.
 */
async function accepted(c, id, value, res) {
  if (res.status !== 200 && res.status !== 201) {
    const after = await c.read(id);
    const intact = id === "replace" || id === "patch" ? after.status === 200 && after.body.ttl === undefined : after.status === 404;
    return intact ? show(res) : `${show(res)}, yet the item changed`;
  }
  const read = await c.read(id);
  if (read.status !== 200) return `accepted, then read ${read.status}`;
  if (JSON.stringify(read.body.ttl) !== JSON.stringify(value)) return `accepted, reads back ttl ${JSON.stringify(read.body.ttl)}`;
  return "accepted";
}

/**
 * result turns an SDK call into {status, body, message}: the response's
 * status and resource, or the error's status and text.
 */
async function result(call) {
  try {
    const res = await call();
    return { status: res.statusCode, body: res.resource };
  } catch (err) {
    if (typeof err.code !== "number") throw err;
    return { status: err.code, message: errorText(err.body?.message ?? err.message) };
  }
}

const PK = "p";

/** ifMatchOptions is the request options for an If-Match etag, if any. */
function ifMatchOptions(etag) {
  return etag ? { accessCondition: { type: "IfMatch", condition: etag } } : undefined;
}

/** Container is a container of the runner's, in a database of its own. */
class Container {
  static async create(runner, id, p) {
    const { database } = await runner.client.databases.create({ id: `db-${id}` });
    const c = new Container(runner, database, id);
    return { container: c, result: await result(() => database.containers.create(c.body(p))) };
  }

  constructor(runner, database, id) {
    this.runner = runner;
    this.database = database;
    this.id = id;
    this.sdk = database.container(id);
  }

  body({ defaultTtl, indexingNone }) {
    const body = { id: this.id, partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 } };
    if (defaultTtl !== undefined) body.defaultTtl = defaultTtl;
    if (indexingNone) body.indexingPolicy = { indexingMode: "none", automatic: false };
    return body;
  }

  replace(p) {
    return result(() => this.sdk.replace(this.body(p)));
  }

  async defaultTtl() {
    return (await this.sdk.read()).resource.defaultTtl;
  }

  write(kind, id, body, ifMatch) {
    const options = ifMatchOptions(ifMatch);
    if (kind === "replace") return result(() => this.sdk.item(id, PK).replace(body, options));
    return result(() => this.sdk.items[kind](body, options));
  }

  patch(id, path, value, ifMatch) {
    return result(() => this.sdk.item(id, PK).patch([{ op: "set", path, value }], ifMatchOptions(ifMatch)));
  }

  delete(id, ifMatch) {
    return result(() => this.sdk.item(id, PK).delete(ifMatchOptions(ifMatch)));
  }

  read(id) {
    return result(() => this.sdk.item(id, PK).read());
  }

  async query(sql) {
    return (await this.sdk.items.query(sql, { maxItemCount: 2 }).fetchAll()).resources;
  }

  async readAll() {
    return (await this.sdk.items.readAll({ maxItemCount: 2 }).fetchAll()).resources;
  }

  async readFeed() {
    const docs = [];
    const headers = { "x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "2" };
    for (;;) {
      const res = await restRequest(this.runner.endpoint, {
        method: "GET",
        path: `/dbs/${encodeURIComponent(this.database.id)}/colls/${encodeURIComponent(this.id)}/docs`,
        headers,
      });
      assert.equal(res.status, 200, `GET …/docs answered ${res.status}: ${res.text}`);
      docs.push(...res.json.Documents);
      const next = res.headers.get("x-ms-continuation");
      if (!next) return docs;
      headers["x-ms-continuation"] = next;
    }
  }
}
