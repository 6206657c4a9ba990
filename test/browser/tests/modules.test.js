// Unit tests of the page's DOM-free modules (signing, resource tokens,
// TTL rules, item helpers), run in Node against the very files the
// server embeds.

import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { describe, it } from "node:test";

import { errorText, throughputHeaders } from "../../../web/static/js/api.js";
import { makeTokenSigner, parseCredential, parseResourceToken } from "../../../web/static/js/auth.js";
import { grantRoute, makeGrant, parseResourceLink, permissionFields } from "../../../web/static/js/grant.js";
import { containerReplaceBody, describeOffer, parseItem, parsePartitionKey, parsePartitionKeyValue, parseQueryMetrics, partitionKeyHeader, partitionKeyOf, pathParts, provisionedThroughput } from "../../../web/static/js/model.js";
import { parseRoute, routeHref } from "../../../web/static/js/router.js";
import { fullTextPolicyWith, isRankedQuery, propertyExpr, searchDefinition, searchExamples } from "../../../web/static/js/search.js";
import { hmacSha256, sha256 } from "../../../web/static/js/sha256.js";
import { connectionString, snippets } from "../../../web/static/js/snippets.js";
import { defaultTtlFor, expiresAt, isExpired, ttlSetting } from "../../../web/static/js/ttl.js";
import { argValue, expiryRows, readMatrix } from "../../js/lib/ttldata.js";
import { EMULATOR_KEY } from "../lib/ebb.js";

// resourceOf and makeSigner are pinned with known vectors in the JS SDK
// suite (test/js/tests/sign.test.js), which signs with auth.js too.
describe("signing", () => {
  it("the plain-JavaScript fallback agrees with Node's crypto", () => {
    for (let n = 0; n < 200; n += 7) {
      const key = randomBytes(n % 100);
      const msg = randomBytes(n);
      assert.equal(Buffer.from(hmacSha256(key, msg)).toString("hex"), createHmac("sha256", key).update(msg).digest("hex"), `n=${n}`);
    }
    assert.equal(Buffer.from(sha256(new Uint8Array())).toString("hex"), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("accepts a key or a connection string", () => {
    assert.equal(parseCredential(` ${EMULATOR_KEY} `).key, EMULATOR_KEY);
    const cs = parseCredential(`AccountEndpoint=https://localhost:8081/;AccountKey=${EMULATOR_KEY};`);
    assert.deepEqual(cs, { key: EMULATOR_KEY, endpoint: "https://localhost:8081/" });
    assert.throws(() => parseCredential(""), /Enter an account key/);
    assert.throws(() => parseCredential("not a key!"), /not valid base64/);
  });
});

describe("resource tokens", () => {
  const token = "type=resource&ver=1.0&sig=abc-_12";

  it("are sent as they are, URL-encoded as a whole, on every request", async () => {
    const sign = makeTokenSigner(token);
    assert.equal(await sign("GET", "/", "Tue, 01 Jul 2025 00:00:00 GMT"), "type%3Dresource%26ver%3D1.0%26sig%3Dabc-_12");
    assert.equal(await sign("POST", "/dbs/a/colls/b/docs", "Wed, 02 Jul 2025 00:00:00 GMT"), encodeURIComponent(token));
  });

  it("are accepted as the permission gave them or URL-encoded", () => {
    assert.equal(parseResourceToken(`  ${token}\n`), token);
    assert.equal(parseResourceToken(encodeURIComponent(token)), token);
    assert.throws(() => parseResourceToken(" "), /Enter a resource token/);
    for (const bad of [EMULATOR_KEY, "type=master&ver=1.0&sig=x", "type=resource&ver=1.0&sig=", "type%3Dresource%26sig%3D%E0"]) {
      assert.throws(() => parseResourceToken(bad), /resource token/, bad);
    }
  });

  it("are for a container or an item", () => {
    assert.deepEqual(parseResourceLink(" /dbs/shop/colls/carts/ "), { link: "dbs/shop/colls/carts", db: "shop", coll: "carts", item: null });
    assert.deepEqual(parseResourceLink("dbs/shop/colls/carts/docs/c 1"), { link: "dbs/shop/colls/carts/docs/c 1", db: "shop", coll: "carts", item: "c 1" });
    for (const bad of ["", "dbs/shop", "dbs/shop/colls", "dbs/shop/colls/carts/sprocs/p", "dbs//colls/carts", "colls/carts/dbs/shop", "dbs/shop/colls/carts/docs"]) {
      assert.throws(() => parseResourceLink(bad), /names a container/, JSON.stringify(bad));
    }
  });

  it("read a whole permission pasted as JSON", () => {
    const permission = { id: "p", permissionMode: "All", resource: "dbs/shop/colls/carts", _token: token, _rid: "x" };
    assert.deepEqual(permissionFields(JSON.stringify(permission)), { token, link: "dbs/shop/colls/carts", mode: "All" });
    assert.equal(permissionFields(JSON.stringify({ ...permission, permissionMode: "Read" })).mode, "Read");
    assert.equal(permissionFields(token), null);
    assert.equal(permissionFields('{"id": "p"}'), null);
  });

  it("open only the granted container, in the tabs a token can use", () => {
    const grant = makeGrant({ token, link: "dbs/shop/colls/carts", mode: "Read" });
    assert.equal(grant.readOnly, true);
    assert.equal(makeGrant({ token, link: "dbs/shop/colls/carts", mode: "All" }).readOnly, false);
    const carts = (tab) => ({ page: "container", db: "shop", coll: "carts", tab });
    for (const [target, want] of [
      [{ page: "home" }, carts("items")],
      [{ page: "database", db: "shop" }, carts("items")],
      [{ page: "container", db: "shop", coll: "orders", tab: "query" }, carts("query")],
      [carts("settings"), carts("items")],
      [carts("scripts"), carts("items")],
      [carts("query"), carts("query")],
      [{ page: "connect" }, { page: "connect" }],
    ]) {
      assert.deepEqual(grantRoute(grant, target), want, JSON.stringify(target));
    }
  });

  it("of one item are read with the partition key the user types", () => {
    assert.deepEqual(parsePartitionKey(" ada "), { value: ["ada"] });
    assert.deepEqual(parsePartitionKey("5"), { value: [5] });
    assert.deepEqual(parsePartitionKey('["t", 5]'), { value: ["t", 5] });
    assert.match(parsePartitionKey("[]").error, /one to three values/);
    assert.match(parsePartitionKey("[[1]]").error, /string, a number/);
    assert.match(parsePartitionKey("[1,").error, /Not a valid JSON array/);
  });
});

describe("TTL", () => {
  // The rows come from the TTL contract's data file, testdata/ttl/matrix.
  const portal = { Off: "off", "On (no default)": "on-no-default" };

  it("maps each defaultTtl the server accepts to the portal's setting and back", () => {
    for (const d of readMatrix().filter((d) => d.cmd === "default-ttl" && !d.expected.startsWith("400"))) {
      const value = argValue(d, "value");
      const seconds = /^On (\d+) s$/.exec(d.expected);
      const want = seconds ? { mode: "on", seconds: Number(seconds[1]) } : { mode: portal[d.expected], seconds: null };
      assert.deepEqual(ttlSetting(value), want, `${d.pos}: ${d.line}`);
      assert.equal(defaultTtlFor(want.mode, String(want.seconds ?? "")), value ?? undefined, `${d.pos}: back to defaultTtl`);
    }
  });

  it("refuses the seconds the server refuses, and what is not a number of seconds", () => {
    const refused = readMatrix()
      .filter((d) => d.cmd === "default-ttl" && d.expected.startsWith("400") && typeof argValue(d, "value") === "number")
      .map((d) => String(argValue(d, "value")));
    assert.ok(refused.length > 0);
    for (const bad of [...refused, "", "-1", "ten"]) {
      assert.throws(() => defaultTtlFor("on", bad), /whole number of seconds/, bad);
    }
  });

  it("computes expiry from _ts and the effective ttl", () => {
    const ts = 1_000;
    for (const row of expiryRows()) {
      const item = row.ttl === undefined ? { _ts: ts } : { _ts: ts, ttl: row.ttl };
      const at = expiresAt(item, row.defaultTtl);
      assert.equal(at, row.expiresAfter === null ? null : ts + row.expiresAfter, `${row.d.pos}: ${row.d.line}`);
      for (const p of row.probes) {
        assert.equal(isExpired(at, ts + p.at), !p.visible, `${row.d.pos}: ${row.d.line} at _ts+${p.at}`);
      }
    }
    // Not a valid ttl (as an earlier version stored while TTL was off): counts as absent, as on the server.
    assert.equal(expiresAt({ _ts: ts, ttl: "soon" }, 10), ts + 10);
  });
});

describe("containers and items", () => {
  it("a replace body leaves out defaultTtl when TTL is off, and system properties always", () => {
    const container = { id: "c", partitionKey: { paths: ["/pk"], kind: "Hash" }, defaultTtl: 10, indexingPolicy: { indexingMode: "consistent" }, uniqueKeyPolicy: { uniqueKeys: [] }, _rid: "x", _etag: '"1"', _ts: 1 };
    const off = containerReplaceBody(container, { defaultTtl: undefined, indexingPolicy: { indexingMode: "lazy" } });
    assert.deepEqual(off, { id: "c", partitionKey: container.partitionKey, indexingPolicy: { indexingMode: "lazy" }, uniqueKeyPolicy: { uniqueKeys: [] } });
    assert.equal(containerReplaceBody(container, { defaultTtl: -1, indexingPolicy: {} }).defaultTtl, -1);
  });

  it("reads partition key values, with {} for a missing path", () => {
    const container = { partitionKey: { paths: ["/customer"] } };
    assert.deepEqual(partitionKeyOf({ customer: "ada" }, container), ["ada"]);
    assert.deepEqual(partitionKeyOf({}, container), [{}]);
    assert.deepEqual(partitionKeyOf({ a: { "b c": 5 } }, { partitionKey: { paths: ['/a/"b c"'] } }), [5]);
    assert.deepEqual(pathParts('/a/"b\\"c"/d'), ["a", 'b"c', "d"]);
    assert.equal(partitionKeyHeader(["Zoë"]), '["Zo\\u00eb"]');
    assert.equal(partitionKeyHeader([{}]), "[{}]");
  });

  it("reads a partition key value as typed: JSON scalars, otherwise a string", () => {
    for (const [text, want] of [
      ["ada", "ada"],
      ["  ada lovelace ", "ada lovelace"],
      ["5", 5],
      ["-1.5", -1.5],
      ['"5"', "5"],
      ['""', ""],
      ["true", true],
      ["null", null],
      ["{a", "{a"],
      ["Zoë", "Zoë"],
    ]) {
      assert.deepEqual(parsePartitionKeyValue(text), { value: want }, JSON.stringify(text));
    }
    assert.match(parsePartitionKeyValue(" ").error, /Enter a value/);
    assert.match(parsePartitionKeyValue("[1]").error, /string, a number/);
    assert.match(parsePartitionKeyValue('{"a":1}').error, /string, a number/);
    assert.match(parsePartitionKeyValue("1e400").error, /too large/);
  });

  it("validates edited items", () => {
    assert.deepEqual(parseItem('{"id":"a","ttl":-1}'), { item: { id: "a", ttl: -1 } });
    assert.match(parseItem("{").error, /Not valid JSON/);
    assert.match(parseItem("[]").error, /JSON object/);
    assert.match(parseItem('{"x":1}').error, /"id"/);
    assert.match(parseItem('{"id":"a/b"}').error, /cannot contain/);
    assert.match(parseItem('{"id":"a","ttl":0}').error, /"ttl" must be -1/);
    assert.match(parseItem('{"id":"a","ttl":null}').error, /"ttl" must be -1/);
  });
});

describe("throughput", () => {
  it("reads a new container's throughput with the service's minimums and steps", () => {
    assert.equal(provisionedThroughput("shared", "anything"), null);
    assert.deepEqual(provisionedThroughput("manual", " 400 "), { manual: 400 });
    assert.deepEqual(provisionedThroughput("manual", "1300"), { manual: 1300 });
    assert.deepEqual(provisionedThroughput("autoscale", "4000"), { autoscaleMax: 4000 });
    for (const bad of ["", "300", "450", "400.5", "ten"]) {
      assert.throws(() => provisionedThroughput("manual", bad), /at least 400 RU\/s and a multiple of 100/, bad);
    }
    for (const bad of ["", "400", "900", "1500"]) {
      assert.throws(() => provisionedThroughput("autoscale", bad), /at least 1000 RU\/s and a multiple of 1000/, bad);
    }
  });

  it("sends manual and autoscale throughput in the headers the service takes", () => {
    assert.deepEqual(throughputHeaders({ manual: 500 }), { "x-ms-offer-throughput": "500" });
    assert.deepEqual(throughputHeaders({ autoscaleMax: 4000 }), { "x-ms-cosmos-offer-autopilot-settings": '{"maxThroughput":4000}' });
    assert.deepEqual(throughputHeaders(null), {});
  });

  it("describes an offer", () => {
    assert.equal(describeOffer({ content: { offerThroughput: 400 } }), "400 RU/s");
    assert.equal(describeOffer({ content: { offerThroughput: 400, offerAutopilotSettings: { maxThroughput: 4000 } } }), "autoscale, up to 4000 RU/s");
  });
});

describe("vector and full-text search", () => {
  it("a new container gets only the policies and indexes the user set", () => {
    assert.deepEqual(searchDefinition({}), {});
    const def = searchDefinition({
      embeddings: [
        { path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 3, index: "flat" },
        { path: "/w", dataType: "int8", distanceFunction: "euclidean", dimensions: 0, index: "" },
      ],
      fullTextPaths: [
        { path: "/text", index: true },
        { path: "/title", index: false },
      ],
    });
    assert.deepEqual(def, {
      vectorEmbeddingPolicy: {
        vectorEmbeddings: [
          { path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 3 },
          { path: "/w", dataType: "int8", distanceFunction: "euclidean", dimensions: 0 },
        ],
      },
      fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }, { path: "/title", language: "en-US" }] },
      indexingPolicy: { vectorIndexes: [{ path: "/v", type: "flat" }], fullTextIndexes: [{ path: "/text" }] },
    });
    assert.deepEqual(searchDefinition({ fullTextPaths: [{ path: "/t", index: false }] }), { fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/t", language: "en-US" }] } });
  });

  it("a full-text policy with its paths edited keeps what was read", () => {
    const policy = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/a", language: "en-US" }, { path: "/b", language: "EN-us" }] };
    assert.equal(fullTextPolicyWith(policy, ["/a", "/b"]), policy, "unchanged paths: the policy as read");
    assert.deepEqual(fullTextPolicyWith(policy, ["/b", "/c"]), { defaultLanguage: "en-US", fullTextPaths: [{ path: "/b", language: "EN-us" }, { path: "/c", language: "en-US" }] });
    assert.deepEqual(fullTextPolicyWith(policy, []), { defaultLanguage: "en-US", fullTextPaths: [] });
    assert.equal(fullTextPolicyWith(undefined, []), undefined, "no policy and no paths: none");
    assert.deepEqual(fullTextPolicyWith(undefined, ["/t"]), { defaultLanguage: "en-US", fullTextPaths: [{ path: "/t", language: "en-US" }] });
  });

  it("a replace body carries an edited full-text policy and the rest as read", () => {
    const container = { id: "c", partitionKey: { paths: ["/pk"] }, vectorEmbeddingPolicy: { vectorEmbeddings: [] }, fullTextPolicy: { fullTextPaths: [] }, _rid: "x" };
    const changed = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/t", language: "en-US" }] };
    assert.deepEqual(containerReplaceBody(container, { indexingPolicy: {}, fullTextPolicy: changed }).fullTextPolicy, changed);
    assert.equal("fullTextPolicy" in containerReplaceBody(container, { indexingPolicy: {}, fullTextPolicy: undefined }), false);
    const kept = containerReplaceBody(container, { indexingPolicy: {} });
    assert.deepEqual(kept.fullTextPolicy, container.fullTextPolicy, "not named: kept as read");
    assert.deepEqual(kept.vectorEmbeddingPolicy, container.vectorEmbeddingPolicy);
  });

  it("tells queries that rank their rows", () => {
    for (const [sql, want] of [
      ["SELECT TOP 2 c.id FROM c ORDER BY VectorDistance(c.v, [1,0,0])", true],
      ["select c.id from c order   by vectordistance (c.v, [1])", true],
      ["SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, 'fox')", true],
      ["SELECT c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), VectorDistance(c.v, [1]))", true],
      ["SELECT c.id, VectorDistance(c.v, [1]) AS s FROM c", false],
      ["SELECT c.id FROM c ORDER BY c.rank", false],
      ["SELECT c.id FROM c ORDER BY c.id", false],
    ]) {
      assert.equal(isRankedQuery(sql), want, sql);
    }
  });

  it("writes example queries from the container's paths", () => {
    assert.equal(propertyExpr("/a/b"), "c.a.b");
    assert.equal(propertyExpr('/"a b"/c'), 'c["a b"].c');
    assert.deepEqual(searchExamples({}), []);
    const both = searchExamples({
      vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dimensions: 3 }] },
      fullTextPolicy: { fullTextPaths: [{ path: "/text" }] },
    });
    assert.deepEqual(both.map((e) => e.id), ["vector", "fulltext", "hybrid"]);
    assert.equal(both[0].sql, "SELECT TOP 10 c.id, VectorDistance(c.v, [1, 0, 0]) AS score\nFROM c\nORDER BY VectorDistance(c.v, [1, 0, 0])");
    assert.equal(both[1].sql, "SELECT TOP 10 c.id, c.text\nFROM c\nORDER BY RANK FullTextScore(c.text, 'search')");
    assert.equal(both[2].sql, "SELECT TOP 10 c.id, c.text\nFROM c\nORDER BY RANK RRF(FullTextScore(c.text, 'search'), VectorDistance(c.v, [1, 0, 0]))");
    assert.deepEqual(searchExamples({ fullTextPolicy: { fullTextPaths: [{ path: "/t" }] } }).map((e) => e.id), ["fulltext"]);
  });
});

describe("connect snippets", () => {
  const endpoint = "https://localhost:8081/";
  it("use the endpoint and key in every SDK's snippet", () => {
    const all = snippets(endpoint, EMULATOR_KEY);
    assert.deepEqual(all.map((s) => s.name), ["Go", "JavaScript", "Python", ".NET", "Java"]);
    for (const s of all) {
      assert.ok(s.code.includes(endpoint) || s.code.includes(`AccountEndpoint=${endpoint};`), `${s.name}: endpoint`);
      assert.ok(s.code.includes(EMULATOR_KEY), `${s.name}: key`);
      assert.doesNotMatch(s.code, /emulator\.pem/, `${s.name}: no certificate without TLS`);
    }
    assert.equal(connectionString(endpoint, "k"), `AccountEndpoint=${endpoint};AccountKey=k;`);
  });

  it("say how to trust the certificate over TLS", () => {
    for (const s of snippets(endpoint, EMULATOR_KEY, { tls: true })) {
      assert.match(s.code, /emulator\.pem/, s.name);
    }
  });
});

describe("server responses", () => {
  it("finds the text inside a Cosmos error message", () => {
    const msg = 'Message: {"Errors":["Indexing mode value cannot be \'none\' when \'defaultTtl\' is specified in the collection"]}\r\nActivityId: 1234, Request URI: /dbs/a/colls/b';
    assert.equal(errorText(msg), "Indexing mode value cannot be 'none' when 'defaultTtl' is specified in the collection");
    assert.equal(errorText("plain text"), "plain text");
  });

  it("parses query metrics", () => {
    assert.deepEqual(parseQueryMetrics("totalExecutionTimeInMs=0.10;retrievedDocumentCount=2"), [
      ["totalExecutionTimeInMs", "0.10"],
      ["retrievedDocumentCount", "2"],
    ]);
    assert.deepEqual(parseQueryMetrics(""), []);
  });
});

describe("routes", () => {
  it("round-trip through the location hash", () => {
    for (const route of [
      { page: "home" },
      { page: "database", db: "a b" },
      { page: "container", db: "shop", coll: "c/1", tab: "settings" },
      { page: "connect" },
    ]) {
      assert.deepEqual(parseRoute(routeHref(route)), route);
    }
    assert.deepEqual(parseRoute("#/db/x/coll/y/nonsense"), { page: "container", db: "x", coll: "y", tab: "items" });
  });
});
