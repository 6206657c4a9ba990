// Containers and items as the page handles them: partition key values,
// the body of a container replace, and validation of an edited item.

import { MAX_TTL, validItemTtl } from "./ttl.js";

/** partitionKeyPaths lists a container's partition key paths. */
function partitionKeyPaths(container) {
  return container?.partitionKey?.paths ?? [];
}

/** pathParts splits a partition key path such as /a/"b c"/d into its
 * property names. */
export function pathParts(path) {
  const parts = [];
  const re = /\/(?:"((?:[^"\\]|\\.)*)"|([^/]*))/g;
  let m;
  while ((m = re.exec(path)) !== null) {
    parts.push(m[1] !== undefined ? JSON.parse(`"${m[1]}"`) : m[2]);
  }
  return parts;
}

/** valueAt reads the value at a partition key path; undefined when the
 * item lacks it. */
function valueAt(item, path) {
  let v = item;
  for (const name of pathParts(path)) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !(name in v)) return undefined;
    v = v[name];
  }
  return v;
}

/** partitionKeyOf returns the item's partition key values, one per path,
 * with {} standing for "the item lacks this path" (Cosmos's None). */
export function partitionKeyOf(item, container) {
  return partitionKeyPaths(container).map((path) => {
    const v = valueAt(item, path);
    return v === undefined ? {} : v;
  });
}

/** partitionKeyHeader is the x-ms-documentdb-partitionkey value: a JSON
 * array with non-ASCII characters escaped, as the SDKs send it. */
export function partitionKeyHeader(values) {
  return JSON.stringify(values).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * parsePartitionKeyValue reads one partition key value as the user typed
 * it: JSON when the text is a JSON string, number, true, false or null
 * (so 5 is a number and "5" a string), and otherwise the text itself as
 * a string. Whitespace around the text is ignored. It returns {value} or
 * {error} with a message for the user.
 */
export function parsePartitionKeyValue(text) {
  const t = text.trim();
  if (t === "") return { error: 'Enter a value (write "" for the empty string).' };
  let value;
  try {
    value = JSON.parse(t);
  } catch {
    return { value: t };
  }
  if (value !== null && typeof value === "object") {
    return { error: "A partition key value is a string, a number, true, false or null." };
  }
  if (typeof value === "number" && !Number.isFinite(value)) {
    return { error: `${t} is too large for a number (a JSON number is a 64-bit float).` };
  }
  return { value };
}

/**
 * parsePartitionKey reads a whole partition key as the user typed it: a
 * JSON array of its values for a hierarchical key (["t", 5]), and
 * otherwise one value as parsePartitionKeyValue reads it. It returns
 * {value} (the values, an array) or {error} with a message for the user.
 */
export function parsePartitionKey(text) {
  const t = text.trim();
  if (!t.startsWith("[")) {
    const one = parsePartitionKeyValue(t);
    return one.error ? one : { value: [one.value] };
  }
  let values;
  try {
    values = JSON.parse(t);
  } catch (e) {
    return { error: `Not a valid JSON array: ${e.message}` };
  }
  if (values.length < 1 || values.length > 3) return { error: "A hierarchical partition key has one to three values." };
  for (const v of values) {
    const one = parsePartitionKeyValue(JSON.stringify(v) ?? "");
    if (one.error) return one;
  }
  return { value: values };
}

/** describePartitionKey shows a partition key value in a table cell. */
export function describePartitionKey(values) {
  const shown = values.map((v) => (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0 ? "(none)" : JSON.stringify(v)));
  return shown.join(", ");
}

/** newItemTemplate is the starting JSON for a new item: an id and the
 * partition key properties. */
export function newItemTemplate(container) {
  const item = { id: "" };
  for (const path of partitionKeyPaths(container)) {
    const parts = pathParts(path);
    let at = item;
    parts.forEach((name, i) => {
      if (i === parts.length - 1) {
        if (!(name in at)) at[name] = "";
      } else {
        if (typeof at[name] !== "object" || at[name] === null) at[name] = {};
        at = at[name];
      }
    });
  }
  return item;
}

/**
 * containerReplaceBody is the full body for PUT /dbs/{db}/colls/{coll}:
 * the container's own properties (system properties dropped), the given
 * indexing policy, and defaultTtl only when TTL is on. A replace without
 * defaultTtl turns TTL off. When changes name a fullTextPolicy it
 * replaces the container's (undefined leaves the property out); every
 * other property, the vectorEmbeddingPolicy among them, goes back as
 * read.
 */
export function containerReplaceBody(container, changes) {
  const { defaultTtl, indexingPolicy } = changes;
  const body = {};
  for (const [k, v] of Object.entries(container)) {
    if (!k.startsWith("_") && k !== "defaultTtl") body[k] = v;
  }
  body.indexingPolicy = indexingPolicy;
  if (defaultTtl !== undefined) body.defaultTtl = defaultTtl;
  if ("fullTextPolicy" in changes) {
    if (changes.fullTextPolicy === undefined) delete body.fullTextPolicy;
    else body.fullTextPolicy = changes.fullTextPolicy;
  }
  return body;
}

/** Throughput of a new container: the database's, or its own. */
export const THROUGHPUT_SHARED = "shared";
export const THROUGHPUT_MANUAL = "manual";
export const THROUGHPUT_AUTOSCALE = "autoscale";

/**
 * provisionedThroughput reads the throughput a create form asks for:
 * null (the database's shared throughput), {manual} or {autoscaleMax},
 * with the service's minimums and steps (Ebb applies the same). It
 * throws an Error with a message for the user.
 */
export function provisionedThroughput(mode, text) {
  if (mode === THROUGHPUT_SHARED) return null;
  const t = String(text ?? "").trim();
  const n = Number(t);
  const whole = t !== "" && Number.isInteger(n);
  if (mode === THROUGHPUT_AUTOSCALE) {
    if (!whole || n < 1000 || n % 1000 !== 0) throw new Error("The autoscale maximum must be at least 1000 RU/s and a multiple of 1000.");
    return { autoscaleMax: n };
  }
  if (!whole || n < 400 || n % 100 !== 0) throw new Error("Manual throughput must be at least 400 RU/s and a multiple of 100.");
  return { manual: n };
}

/** describeOffer writes an offer's throughput: "400 RU/s" or
 * "autoscale, up to 4000 RU/s". */
export function describeOffer(offer) {
  const autoscale = offer?.content?.offerAutopilotSettings;
  if (autoscale) return `autoscale, up to ${autoscale.maxThroughput} RU/s`;
  return `${offer?.content?.offerThroughput} RU/s`;
}

/**
 * parseItem validates the text of an edited item. It returns
 * {item} or {error} with a message for the user.
 */
export function parseItem(text) {
  let item;
  try {
    item = JSON.parse(text);
  } catch (e) {
    return { error: `Not valid JSON: ${e.message}` };
  }
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    return { error: "An item is a JSON object: { … }." };
  }
  if (typeof item.id !== "string" || item.id === "") {
    return { error: 'The item needs an "id": a non-empty string.' };
  }
  if (/[/\\#?]/.test(item.id)) {
    return { error: 'The id cannot contain "/", "\\", "#" or "?".' };
  }
  if ("ttl" in item && !validItemTtl(item.ttl)) {
    return { error: `"ttl" must be -1 (never expire) or a whole number of seconds from 1 to ${MAX_TTL}; leave it out to use the container's default.` };
  }
  return { item };
}

/** parseObject parses JSON text that must hold an object (an indexing
 * policy); it returns {value} or {error}. */
export function parseObject(text, what) {
  try {
    const value = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return { value };
    return { error: `The ${what} must be a JSON object.` };
  } catch (e) {
    return { error: `The ${what} is not valid JSON: ${e.message}` };
  }
}

/** parseQueryMetrics splits "a=1;b=2" into [[name, value]]. */
export function parseQueryMetrics(header) {
  if (!header) return [];
  return header
    .split(";")
    .map((part) => part.split("="))
    .filter((kv) => kv.length === 2 && kv[0] !== "")
    .map(([k, v]) => [k.trim(), v.trim()]);
}
