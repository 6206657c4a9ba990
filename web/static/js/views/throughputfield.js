// The throughput of a new container, as the portal offers it: Manual
// (RU/s) or Autoscale (a maximum), and, in a database that has
// throughput of its own, sharing the database's.

import { h, uid } from "../dom.js";
import { THROUGHPUT_AUTOSCALE, THROUGHPUT_MANUAL, THROUGHPUT_SHARED, provisionedThroughput } from "../model.js";

/** Per mode: the number's label, its minimum and step, and what it means. */
const MODES = {
  [THROUGHPUT_MANUAL]: { label: "Throughput (RU/s)", min: 400, step: 100, explain: "A fixed rate: at least 400 RU/s, in steps of 100." },
  [THROUGHPUT_AUTOSCALE]: { label: "Maximum throughput (RU/s)", min: 1000, step: 1000, explain: "The container may use up to this maximum: at least 1000 RU/s, in steps of 1000." },
};

/**
 * throughputField returns {el, read}. shared describes the database's
 * offer ("400 RU/s") or is null when the database has none, in which
 * case sharing is not offered. read() gives what createContainer takes
 * (null, {manual} or {autoscaleMax}) or throws an Error for the user.
 */
export function throughputField(shared) {
  const name = uid("throughput");
  const radio = (value, label) => {
    const input = h("input", { type: "radio", name, value });
    return { input, label: h("label", { class: "radio" }, input, label) };
  };
  const radios = [
    shared ? radio(THROUGHPUT_SHARED, `Shared with the database (${shared})`) : null,
    radio(THROUGHPUT_MANUAL, "Manual"),
    radio(THROUGHPUT_AUTOSCALE, "Autoscale"),
  ].filter(Boolean);
  radios[0].input.checked = true;

  const input = h("input", { type: "number", inputmode: "numeric", class: "throughput-ru" });
  input.id = `${name}-ru`;
  const label = h("label", { for: input.id });
  const explain = h("p", { class: "hint", id: `${name}-hint`, "aria-live": "polite" });
  const number = h("div", { class: "field" }, label, input);
  // What the number holds in each mode, so switching back restores it.
  const values = { [THROUGHPUT_MANUAL]: "400", [THROUGHPUT_AUTOSCALE]: "1000" };

  const mode = () => radios.find((r) => r.input.checked).input.value;
  let shown = null;
  const sync = () => {
    if (shown && shown !== THROUGHPUT_SHARED) values[shown] = input.value;
    shown = mode();
    const m = MODES[shown];
    number.hidden = !m;
    input.required = Boolean(m);
    if (m) {
      label.textContent = m.label;
      input.min = String(m.min);
      input.step = String(m.step);
      input.value = values[shown];
    }
    explain.textContent = m ? m.explain : `The container shares the database's throughput (${shared}) with the database's other containers.`;
  };
  radios.forEach((r) => r.input.addEventListener("change", sync));
  sync();

  const el = h(
    "fieldset",
    { class: "throughput-field", "aria-describedby": explain.id },
    h("legend", {}, "Throughput"),
    h("div", { class: "radio-row" }, radios.map((r) => r.label)),
    number,
    explain,
  );
  return { el, read: () => provisionedThroughput(mode(), input.value) };
}
