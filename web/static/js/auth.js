// Master-key signing, as the Cosmos SDKs do it (wire contract §2).
//
// Every request carries x-ms-date and an Authorization header holding
// HMAC-SHA256 over "verb\nresourceType\nresourceLink\ndate\n\n" (all but
// the link lower-cased), keyed by the base64-decoded master key.
//
// A client holding a resource token (a permission's _token) instead of a
// key signs nothing: it sends the token itself, URL-encoded as a whole,
// as the Authorization header of every request (makeTokenSigner).
//
// This is the one JavaScript signer in the repository: the node test
// suites (test/js, test/browser) import this file rather than keep copies
// of their own, and test/js/tests/sign.test.js pins it with known vectors.
// It therefore uses nothing but what both a browser and Node >= 20 offer.

import { hmacSha256 } from "./sha256.js";

/** The path, under a container, of delete by partition key. */
const PARTITION_KEY_DELETE = "/operations/partitionkeydelete";

/**
 * resourceOf derives the signed resource type and link from an escaped
 * URL path. The path is split before each segment is percent-decoded, so
 * an escaped "/" stays inside its segment. An even number of segments
 * names a resource (type: the second-to-last segment, link: the whole
 * path); an odd number names a feed (type: the last segment, link: the
 * parent path). Offers are signed with their lower-cased id alone.
 * Delete by partition key (dbs/{db}/colls/{coll}/operations/
 * partitionkeydelete) is signed as its container, as the JS SDK's
 * deleteAllItemsForPartitionKey signs it and the server checks it.
 */
export function resourceOf(escapedPath) {
  let trimmed = escapedPath.replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return { type: "", link: "" };
  if (trimmed.endsWith(PARTITION_KEY_DELETE)) {
    const container = trimmed.slice(0, -PARTITION_KEY_DELETE.length);
    if (container.split("/").length === 4) trimmed = container;
  }
  const segments = trimmed.split("/").map(decodeURIComponent);
  const n = segments.length;
  if (n % 2 === 1) {
    return { type: segments[n - 1], link: segments.slice(0, -1).join("/") };
  }
  const type = segments[n - 2];
  const link = type === "offers" ? segments[n - 1].toLowerCase() : segments.join("/");
  return { type, link };
}

/** stringToSign is the text the signature covers. */
function stringToSign(verb, type, link, date) {
  return `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
}

/**
 * parseCredential accepts a bare base64 master key or a connection string
 * ("AccountEndpoint=…;AccountKey=…;") and returns {key, endpoint}. It
 * throws an Error whose message is meant for the user.
 */
export function parseCredential(text) {
  const input = text.trim();
  if (input === "") throw new Error("Enter an account key or a connection string.");
  let key = input;
  let endpoint = "";
  if (/accountkey\s*=/i.test(input)) {
    const fields = connectionStringFields(input);
    key = fields.accountkey ?? "";
    endpoint = fields.accountendpoint ?? "";
  }
  if (!isBase64(key)) {
    throw new Error("The account key is not valid base64.");
  }
  return { key, endpoint };
}

/** connectionStringFields splits "A=1;B=2;" into lower-cased names. The
 * key's own "=" padding stays with its value. */
function connectionStringFields(text) {
  const fields = {};
  for (const part of text.split(";")) {
    const at = part.indexOf("=");
    if (at > 0) fields[part.slice(0, at).trim().toLowerCase()] = part.slice(at + 1).trim();
  }
  return fields;
}

function isBase64(s) {
  return s.length > 0 && s.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(s);
}

function base64ToBytes(s) {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

function bytesToBase64(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * makeSigner returns async (verb, escapedPath, date) => Authorization
 * header value for a base64 master key, signing the resource type and
 * link that resourceOf derives from the path.
 */
export async function makeSigner(base64Key) {
  const signLink = await makeLinkSigner(base64Key);
  return (verb, escapedPath, date) => {
    const { type, link } = resourceOf(escapedPath);
    return signLink(verb, type, link, date);
  };
}

/**
 * makeLinkSigner returns async (verb, type, link, date) => Authorization
 * header value for a base64 master key. The link is signed exactly as
 * given (offers included: lower-casing an offer id is resourceOf's job),
 * so tests can sign something other than what a path implies. It uses
 * WebCrypto when there is one (a browser page in a secure context, Node)
 * and the plain-JavaScript HMAC otherwise.
 */
export async function makeLinkSigner(base64Key) {
  const hmac = await hmacFunction(base64ToBytes(base64Key));
  return async (verb, type, link, date) => {
    const text = new TextEncoder().encode(stringToSign(verb, type, link, date));
    const sig = bytesToBase64(await hmac(text));
    return encodeURIComponent(`type=master&ver=1.0&sig=${sig}`);
  };
}

async function hmacFunction(keyBytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return async (message) => hmacSha256(keyBytes, message);
  const key = await subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return async (message) => new Uint8Array(await subtle.sign("HMAC", key, message));
}

/** Every resource token starts with its type. */
const RESOURCE_TOKEN_TYPE = "type=resource&";

/**
 * parseResourceToken accepts a permission's _token as the permission
 * gave it ("type=resource&ver=1.0&sig=…") or URL-encoded as it travels,
 * and returns it decoded. It throws an Error whose message is meant for
 * the user. The token is opaque: only the server can tell whether it
 * is valid.
 */
export function parseResourceToken(text) {
  let token = text.trim();
  if (token === "") throw new Error("Enter a resource token.");
  if (/^type%3dresource%26/i.test(token)) {
    try {
      token = decodeURIComponent(token);
    } catch {
      throw new Error("The resource token is URL-encoded, but not validly.");
    }
  }
  if (!token.startsWith(RESOURCE_TOKEN_TYPE) || !/&sig=[^&]/.test(token)) {
    throw new Error("A resource token looks like type=resource&ver=1.0&sig=… (the _token of a permission).");
  }
  return token;
}

/**
 * makeTokenSigner returns async (verb, escapedPath, date) =>
 * Authorization header value for a resource token: the same value for
 * every request, since the server, not the client, ties the token to
 * what it grants.
 */
export function makeTokenSigner(token) {
  const header = encodeURIComponent(token);
  return async () => header;
}
