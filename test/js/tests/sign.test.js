// The master-key signer in web/static/js/auth.js, which the explorer page
// and both node suites use. No server: the expected signatures are
// computed here with node's own HMAC over the string to sign written out
// by hand, and a few are literal values from the server's signer
// (internal/auth Verifier.Sign), so the three cannot drift apart again.

import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { describe, test } from "node:test";

import { makeLinkSigner, makeSigner, resourceOf } from "../../../web/static/js/auth.js";
import { EMULATOR_KEY } from "../lib/server.js";

const DATE = "Sun, 22 Nov 2026 05:19:17 GMT";

/** The Authorization header for a string to sign, by node's crypto. */
function expected(key, text) {
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(text, "utf8").digest("base64");
  return encodeURIComponent(`type=master&ver=1.0&sig=${sig}`);
}

/**
 * withoutWebCrypto runs fn with globalThis.crypto hidden, as in a browser
 * page served over plain http to a host other than localhost, so the
 * signer falls back to the plain-JavaScript HMAC (sha256.js).
 */
async function withoutWebCrypto(fn) {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "crypto");
  Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true });
  try {
    return await fn();
  } finally {
    Object.defineProperty(globalThis, "crypto", saved);
  }
}

// [verb, escaped path, resource type, resource link]: the link keeps its
// case and is percent-decoded segment by segment, except that an offer is
// signed with its lower-cased id alone (what the SDKs send and the REST
// docs require for offers), and delete by partition key is signed as its
// container (what the JS SDK sends).
const cases = [
  ["GET", "/", "", ""],
  ["GET", "/dbs", "dbs", ""],
  ["get", "/dbs/Shop", "dbs", "dbs/Shop"],
  ["POST", "/dbs/Shop/colls", "colls", "dbs/Shop"],
  ["POST", "/dbs/shop/colls/carts/docs/", "docs", "dbs/shop/colls/carts"],
  ["DELETE", "/dbs/shop/colls/carts/docs/a%20b", "docs", "dbs/shop/colls/carts/docs/a b"],
  ["GET", "/dbs/a%2Fb/colls", "colls", "dbs/a/b"],
  ["GET", "/dbs/shop/colls/Carts/docs/Zo%C3%AB%2F1", "docs", "dbs/shop/colls/Carts/docs/Zoë/1"],
  ["POST", "/offers", "offers", ""],
  ["PUT", "/offers/AbCD", "offers", "abcd"],
  ["GET", "/offers/AbCD/", "offers", "abcd"],
  ["POST", "/_ebb/clock", "_ebb", "_ebb/clock"],
  ["GET", "/_ebb/containers/shop/carts/ttl", "ttl", "_ebb/containers/shop/carts"],
  ["GET", "/_ebb/containers/shop/carts/partitiondeletes", "partitiondeletes", "_ebb/containers/shop/carts"],
  ["POST", "/dbs/shop/colls/Carts/operations/partitionkeydelete", "colls", "dbs/shop/colls/Carts"],
  ["POST", "/dbs/shop/colls/a%2Fb/operations/partitionkeydelete", "colls", "dbs/shop/colls/a/b"],
];

describe("resourceOf", () => {
  for (const [, path, type, link] of cases) {
    test(`${path} → type ${JSON.stringify(type)}, link ${JSON.stringify(link)}`, () => {
      assert.deepEqual(resourceOf(path), { type, link });
    });
  }
});

describe("makeSigner", () => {
  const keys = { "the emulator key": EMULATOR_KEY, "a random key": randomBytes(64).toString("base64") };
  for (const [hmac, run] of [
    ["WebCrypto", (fn) => fn()],
    ["the plain-JavaScript HMAC", withoutWebCrypto],
  ]) {
    for (const [keyName, key] of Object.entries(keys)) {
      test(`${hmac}, ${keyName}: verb, type and date lower-cased, link as resourceOf gives it`, async () => {
        const sign = await run(() => makeSigner(key));
        for (const [verb, path, type, link] of cases) {
          const text = `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${DATE.toLowerCase()}\n\n`;
          assert.equal(await sign(verb, path, DATE), expected(key, text), `${verb} ${path}, signed text ${JSON.stringify(text)}`);
        }
      });
    }
  }

  test("agrees with the server's signer", async () => {
    // From internal/auth: Verifier.Sign(verb, ResourceOf(path), DATE) with
    // the emulator key.
    const vectors = [
      ["GET", "/", "type%3Dmaster%26ver%3D1.0%26sig%3DkXcy2rZzdugvzavM9CrSkmVlX2dv8L5BdQQE7bHJ%2FFQ%3D"],
      ["POST", "/dbs/shop/colls/Carts/docs", "type%3Dmaster%26ver%3D1.0%26sig%3DH71cYJhRJaFPWNPhT8xS2X4H6W2WJyw1XoFRyL%2FSwng%3D"],
      ["GET", "/dbs/shop/colls/Carts/docs/Zo%C3%AB%2F1", "type%3Dmaster%26ver%3D1.0%26sig%3DtEacpXqw2Yjjl0r3jSB8d2g0TRrKPT0V3xw3DSqywqY%3D"],
      ["PUT", "/offers/AbCD", "type%3Dmaster%26ver%3D1.0%26sig%3Dlca06kyBwe5SueBW3yfPtpSaFPRdq6IXskkleMZ3k4k%3D"],
    ];
    const sign = await makeSigner(EMULATOR_KEY);
    for (const [verb, path, want] of vectors) {
      assert.equal(await sign(verb, path, DATE), want, `${verb} ${path}`);
    }
  });
});

describe("makeLinkSigner", () => {
  test("signs the type and link it is given, offers included", async () => {
    const sign = await makeLinkSigner(EMULATOR_KEY);
    assert.equal(await sign("GET", "DBS", "dbs/Other", DATE), expected(EMULATOR_KEY, `get\ndbs\ndbs/Other\n${DATE.toLowerCase()}\n\n`));
    assert.equal(await sign("PUT", "offers", "AbCD", DATE), expected(EMULATOR_KEY, `put\noffers\nAbCD\n${DATE.toLowerCase()}\n\n`));
  });
});
