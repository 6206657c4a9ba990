// A signed fetch for the Cosmos REST API, so the test can check through
// the API itself what the page did (the SDKs sign requests the same way).
import { createHmac } from "node:crypto";

/**
 * resourceOf derives the signed resource type and link from an escaped
 * URL path (wire contract §2): even segment count → a resource, odd → a
 * feed; offers are signed with their lower-cased id.
 */
export function resourceOf(escapedPath) {
  const trimmed = escapedPath.replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return { type: "", link: "" };
  const segs = trimmed.split("/").map(decodeURIComponent);
  if (segs.length % 2 === 0) {
    const type = segs[segs.length - 2];
    const link = type === "offers" ? segs[segs.length - 1].toLowerCase() : segs.join("/");
    return { type, link };
  }
  return { type: segs[segs.length - 1], link: segs.slice(0, -1).join("/") };
}

/** authorization returns the Authorization header value for a request. */
export function authorization(key, verb, escapedPath, date) {
  const { type, link } = resourceOf(escapedPath);
  const text = `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(text).digest("base64");
  return encodeURIComponent(`type=master&ver=1.0&sig=${sig}`);
}

/**
 * cosmosFetch sends a signed request and returns {status, headers, body}
 * with the body parsed as JSON when there is one.
 */
export async function cosmosFetch(endpoint, key, verb, escapedPath, { body, headers = {} } = {}) {
  const date = new Date().toUTCString();
  const res = await fetch(new URL(escapedPath, endpoint), {
    method: verb,
    headers: {
      "x-ms-date": date,
      "x-ms-version": "2020-07-15",
      authorization: authorization(key, verb, escapedPath, date),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
