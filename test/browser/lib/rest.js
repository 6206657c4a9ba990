// A signed fetch for the Cosmos REST API, so the test can check through
// the API itself what the page did. It signs with the page's own signer
// (web/static/js/auth.js), which the server checks as it checks the SDKs.
import { makeSigner } from "../../../web/static/js/auth.js";

/**
 * cosmosFetch sends a signed request and returns {status, headers, body}
 * with the body parsed as JSON when there is one.
 */
export async function cosmosFetch(endpoint, key, verb, escapedPath, { body, headers = {} } = {}) {
  const sign = await makeSigner(key);
  const date = new Date().toUTCString();
  const res = await fetch(new URL(escapedPath, endpoint), {
    method: verb,
    headers: {
      "x-ms-date": date,
      "x-ms-version": "2020-07-15",
      authorization: await sign(verb, escapedPath, date),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
