// A container's full-text paths: rows of a path, analyzed in en-US (the
// one language the server takes, so shown rather than chosen), and, in a
// new container's form, whether to index the path.

import { field, h } from "../dom.js";
import { FULL_TEXT_LANGUAGE } from "../search.js";
import { policyRows } from "./policyrows.js";

/**
 * fullTextPathsField returns {el, read, set}. With indexes, each row has
 * an Index checkbox and read() gives [{path, index}]; without, read()
 * gives [{path}]. set(paths) shows these paths (strings) again.
 */
export function fullTextPathsField(paths, { legend, hint, indexes = false }) {
  const rows = policyRows({
    legend,
    hint,
    noun: "full-text path",
    makeRow: (value) => {
      const path = h("input", { required: true, autocomplete: "off", spellcheck: "false", class: "mono policy-path", placeholder: "/text" });
      path.value = value ?? "";
      const index = indexes ? h("input", { type: "checkbox" }) : null;
      return {
        controls: [
          field("Path", path),
          h("p", { class: "policy-fixed" }, "Language ", h("span", { class: "mono" }, FULL_TEXT_LANGUAGE)),
          index ? h("label", { class: "checkbox policy-check" }, index, "Index") : null,
        ],
        focus: path,
        read: () => (index ? { path: path.value.trim(), index: index.checked } : { path: path.value.trim() }),
      };
    },
  });
  rows.set(paths);
  return rows;
}
