// A list of rows the user adds and removes, each a policy entry (a
// vector embedding, a full-text path): one fieldset per row, named by
// its position ("Vector embedding 2"), so a screen reader says which
// row a control and its Remove button belong to.

import { h, uid } from "../dom.js";

/**
 * policyRows returns {el, read, set}. makeRow(value) builds one row's
 * {controls, focus, read}; value is one of the values set() takes
 * (undefined for a row the user adds). read() gives each row's read()
 * in order.
 */
export function policyRows({ legend, hint, noun, makeRow }) {
  const name = uid("rows");
  const title = noun.charAt(0).toUpperCase() + noun.slice(1);
  const hintEl = h("p", { class: "hint", id: `${name}-hint` }, hint);
  const list = h("div", { class: "policy-rows" });
  const add = h("button", { type: "button", class: "button small" }, `Add ${noun}`);
  let rows = [];

  const renumber = () =>
    rows.forEach((row, i) => {
      row.legend.textContent = `${title} ${i + 1}`;
      row.remove.setAttribute("aria-label", `Remove ${noun} ${i + 1}`);
    });
  const addRow = (value) => {
    const row = makeRow(value);
    row.legend = h("legend", {});
    row.remove = h("button", { type: "button", class: "button ghost small policy-remove" }, "Remove");
    row.el = h("fieldset", { class: "policy-row" }, row.legend, row.controls, row.remove);
    row.remove.addEventListener("click", () => {
      rows = rows.filter((r) => r !== row);
      row.el.remove();
      renumber();
      // The removed row's button is gone: keep focus in the list.
      add.focus();
    });
    rows.push(row);
    list.append(row.el);
    renumber();
    return row;
  };
  add.addEventListener("click", () => addRow().focus.focus());

  const set = (values) => {
    rows = [];
    list.replaceChildren();
    values.forEach((v) => addRow(v));
  };
  const el = h("fieldset", { class: "policy-field", "aria-describedby": hintEl.id }, h("legend", {}, legend), hintEl, list, add);
  return { el, read: () => rows.map((r) => r.read()), set };
}
