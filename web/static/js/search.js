// Vector and full-text search as the page handles them: the container
// properties a create form sends (vectorEmbeddingPolicy, fullTextPolicy
// and the indexing policy's vectorIndexes and fullTextIndexes), a
// full-text policy with its paths edited, whether a query ranks its
// rows, and example queries filled from a container's policies. The
// server validates every policy; these helpers only write what the user
// chose in the shape the service takes.

import { pathParts } from "./model.js";

/** The choices the service offers, spelled as it spells them. */
export const VECTOR_DATA_TYPES = ["float32", "float16", "int8", "uint8"];
export const DISTANCE_FUNCTIONS = ["cosine", "dotproduct", "euclidean"];
export const VECTOR_INDEX_TYPES = ["flat", "quantizedFlat", "diskANN"];

/** FULL_TEXT_LANGUAGE is the one language the server analyzes text in. */
export const FULL_TEXT_LANGUAGE = "en-US";

/**
 * searchDefinition is what a new container's body gets for its search
 * policies: embeddings are [{path, dataType, distanceFunction,
 * dimensions, index}] (index "" for none, else a vector index type) and
 * fullTextPaths are [{path, index}] (index true to index the path). A
 * policy or an indexing policy is only there when it has an entry, so a
 * container without search is created as before; the indexing policy
 * carries only the search indexes, and the server fills in the rest.
 */
export function searchDefinition({ embeddings = [], fullTextPaths = [] }) {
  const out = {};
  if (embeddings.length) {
    out.vectorEmbeddingPolicy = {
      vectorEmbeddings: embeddings.map(({ path, dataType, distanceFunction, dimensions }) => ({ path, dataType, distanceFunction, dimensions })),
    };
  }
  if (fullTextPaths.length) {
    out.fullTextPolicy = { defaultLanguage: FULL_TEXT_LANGUAGE, fullTextPaths: fullTextPaths.map(({ path }) => ({ path, language: FULL_TEXT_LANGUAGE })) };
  }
  const vectorIndexes = embeddings.filter((e) => e.index).map((e) => ({ path: e.path, type: e.index }));
  const fullTextIndexes = fullTextPaths.filter((p) => p.index).map((p) => ({ path: p.path }));
  if (vectorIndexes.length || fullTextIndexes.length) {
    out.indexingPolicy = {};
    if (vectorIndexes.length) out.indexingPolicy.vectorIndexes = vectorIndexes;
    if (fullTextIndexes.length) out.indexingPolicy.fullTextIndexes = fullTextIndexes;
  }
  return out;
}

/** fullTextPathsOf lists the paths of a container's fullTextPolicy. */
export function fullTextPathsOf(container) {
  const paths = container?.fullTextPolicy?.fullTextPaths;
  return Array.isArray(paths) ? paths.map((p) => p?.path) : [];
}

/**
 * fullTextPolicyWith is a container's fullTextPolicy with its paths
 * replaced by paths (strings, in order): the policy as read when the
 * paths are the same, each kept path's entry as read (its language
 * included), a new path in en-US. It is undefined (the property left
 * out) for a container that had no policy and still has no paths.
 */
export function fullTextPolicyWith(policy, paths) {
  const had = fullTextPathsOf({ fullTextPolicy: policy });
  if (JSON.stringify(had) === JSON.stringify(paths)) return policy;
  if (!policy && !paths.length) return undefined;
  const entries = Array.isArray(policy?.fullTextPaths) ? policy.fullTextPaths : [];
  return {
    ...policy,
    defaultLanguage: policy?.defaultLanguage ?? FULL_TEXT_LANGUAGE,
    fullTextPaths: paths.map((path) => entries.find((e) => e?.path === path) ?? { path, language: FULL_TEXT_LANGUAGE }),
  };
}

/**
 * isRankedQuery says whether a query orders its rows by similarity or
 * relevance (ORDER BY VectorDistance(…), ORDER BY RANK …), so that a
 * row's position is its rank. It reads the text only: a query that
 * merely mentions these words in a string literal is taken as ranked,
 * which costs nothing but a rank column.
 */
export function isRankedQuery(sql) {
  return /\border\s+by\s+(rank\b|vectordistance\s*\()/i.test(String(sql ?? ""));
}

/** propertyExpr writes a property path ("/a/b") as an expression on the
 * alias: c.a.b, with names that are not identifiers quoted (c["a b"]). */
export function propertyExpr(path, alias = "c") {
  return pathParts(path)
    .map((name) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`))
    .reduce((expr, part) => expr + part, alias);
}

/** exampleVector is a query vector of the embedding's dimensions: 1,
 * then zeros (a valid vector of every data type). */
function exampleVector(dimensions) {
  const n = Number.isInteger(dimensions) && dimensions > 0 ? dimensions : 1;
  return `[${Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0)).join(", ")}]`;
}

/** The word the full-text examples look for, for the user to replace. */
export const EXAMPLE_WORD = "search";

/**
 * searchExamples returns [{id, label, sql}]: a vector search on the
 * container's first embedding, a full-text ranking on its first
 * full-text path, and a hybrid (RRF) of the two, each only when the
 * container has the policy it needs.
 */
export function searchExamples(container) {
  const embedding = container?.vectorEmbeddingPolicy?.vectorEmbeddings?.[0];
  const textPath = fullTextPathsOf(container)[0];
  const out = [];
  const distance = embedding?.path ? `VectorDistance(${propertyExpr(embedding.path)}, ${exampleVector(embedding.dimensions)})` : null;
  const score = textPath ? `FullTextScore(${propertyExpr(textPath)}, '${EXAMPLE_WORD}')` : null;
  if (distance) {
    out.push({ id: "vector", label: "Vector search", sql: `SELECT TOP 10 c.id, ${distance} AS score\nFROM c\nORDER BY ${distance}` });
  }
  // FullTextScore cannot be projected: the ranking shows in the order.
  if (score) {
    out.push({ id: "fulltext", label: "Full-text ranking", sql: `SELECT TOP 10 c.id, ${propertyExpr(textPath)}\nFROM c\nORDER BY RANK ${score}` });
  }
  if (distance && score) {
    out.push({ id: "hybrid", label: "Hybrid (RRF)", sql: `SELECT TOP 10 c.id, ${propertyExpr(textPath)}\nFROM c\nORDER BY RANK RRF(${score}, ${distance})` });
  }
  return out;
}
