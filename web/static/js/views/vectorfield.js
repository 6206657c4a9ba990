// A container's vector embeddings: the rows a new container's form
// edits (path, data type, distance function, dimensions, and an optional
// vector index on the path), and the read-only view the Settings tab
// shows, since the vectorEmbeddingPolicy cannot change once the
// container exists.

import { field, h } from "../dom.js";
import { DISTANCE_FUNCTIONS, VECTOR_DATA_TYPES, VECTOR_INDEX_TYPES } from "../search.js";
import { policyRows } from "./policyrows.js";

/** select is a <select> of values shown as they are spelled on the wire
 * (the service's own names, which its documentation and errors use). */
function select(values, { none } = {}) {
  const options = values.map((v) => h("option", { value: v }, v));
  return h("select", {}, none ? h("option", { value: "" }, none) : null, options);
}

/**
 * vectorEmbeddingsField returns {el, read}: read() gives the rows as
 * [{path, dataType, distanceFunction, dimensions, index}], index "" for
 * no vector index. The numbers are sent as typed (a whole number, which
 * the browser checks): the server says which dimensions each data type
 * and index type take, and its message is shown as it is.
 */
export function vectorEmbeddingsField() {
  const rows = policyRows({
    legend: "Vector embeddings (optional)",
    hint: "Paths that hold vectors, such as /embedding: 1 to 4096 dimensions, at most 505 with a flat index. The policy cannot be changed once the container exists.",
    noun: "vector embedding",
    makeRow: () => {
      const path = h("input", { required: true, autocomplete: "off", spellcheck: "false", class: "mono policy-path", placeholder: "/embedding" });
      const dataType = select(VECTOR_DATA_TYPES);
      const distance = select(DISTANCE_FUNCTIONS);
      const dimensions = h("input", { type: "number", step: "1", inputmode: "numeric", required: true, class: "policy-number" });
      const index = select(VECTOR_INDEX_TYPES, { none: "None" });
      return {
        controls: [field("Path", path), field("Data type", dataType), field("Distance function", distance), field("Dimensions", dimensions), field("Vector index", index)],
        focus: path,
        read: () => ({
          path: path.value.trim(),
          dataType: dataType.value,
          distanceFunction: distance.value,
          dimensions: Number(dimensions.value),
          index: index.value,
        }),
      };
    },
  });
  return { el: rows.el, read: rows.read };
}

/**
 * vectorPolicyView shows a container's vectorEmbeddingPolicy with the
 * vector index of each path, read only, and says it cannot change.
 */
export function vectorPolicyView(container) {
  const embeddings = container.vectorEmbeddingPolicy?.vectorEmbeddings ?? [];
  const indexes = container.indexingPolicy?.vectorIndexes ?? [];
  const title = h("h3", { id: "vector-policy-title" }, "Vector embeddings");
  if (!embeddings.length) {
    return h("div", { class: "settings-section", role: "group", "aria-labelledby": title.id }, title, h("p", { class: "hint" }, "This container has no vector embedding policy. One can only be given when a container is created."));
  }
  const rows = embeddings.map((e) =>
    h(
      "tr",
      {},
      h("td", { "data-label": "Path", class: "mono" }, e.path),
      h("td", { "data-label": "Data type" }, e.dataType),
      h("td", { "data-label": "Distance function" }, e.distanceFunction),
      h("td", { "data-label": "Dimensions", class: "num" }, String(e.dimensions)),
      h("td", { "data-label": "Vector index" }, indexes.find((ix) => ix.path === e.path)?.type ?? "none"),
    ),
  );
  const headers = ["Path", "Data type", "Distance function", "Dimensions", "Vector index"];
  return h(
    "div",
    { class: "settings-section", role: "group", "aria-labelledby": title.id },
    title,
    h("p", { class: "hint", id: "vector-policy-hint" }, "Read only: a container's vector embedding policy cannot be changed after it is created. Its vector indexes are part of the indexing policy above."),
    h(
      "table",
      { class: "table compact responsive", "aria-labelledby": title.id, "aria-describedby": "vector-policy-hint" },
      h("thead", {}, h("tr", {}, headers.map((label) => h("th", { scope: "col", class: label === "Dimensions" ? "num" : null }, label)))),
      h("tbody", {}, rows),
    ),
  );
}
