// The Time to Live control, with the portal's three settings:
// Off / On (no default) / On with a number of seconds.

import { h, uid } from "../dom.js";
import { MAX_TTL, TTL_NO_DEFAULT, TTL_OFF, TTL_ON, defaultTtlFor, formatSeconds, ttlSetting } from "../ttl.js";

const EXPLAIN = {
  [TTL_OFF]: () => "Items are never deleted automatically, and an item's own ttl is ignored.",
  [TTL_NO_DEFAULT]: () => "Items stay until deleted, unless an item sets its own ttl in seconds.",
  [TTL_ON]: (s) =>
    s ? `Items are deleted ${formatSeconds(s)} after their last write, unless an item sets its own ttl (-1 keeps it forever).` : "Items are deleted this many seconds after their last write, unless an item sets its own ttl (-1 keeps it forever).",
};

/**
 * ttlField returns {el, read, set}: read() gives the defaultTtl to send
 * (undefined for Off) or throws an Error with a message for the user.
 */
export function ttlField(defaultTtl) {
  const name = uid("ttl");
  const radio = (value, label) => {
    const input = h("input", { type: "radio", name, value });
    return { input, label: h("label", { class: "radio" }, input, label) };
  };
  const off = radio(TTL_OFF, "Off");
  const noDefault = radio(TTL_NO_DEFAULT, "On (no default)");
  const on = radio(TTL_ON, "On");
  const seconds = h("input", {
    type: "number",
    min: "1",
    max: String(MAX_TTL),
    step: "1",
    inputmode: "numeric",
    class: "ttl-seconds",
    "aria-label": "Time to Live in seconds",
  });
  const explain = h("p", { class: "hint", id: `${name}-hint`, "aria-live": "polite" });
  const radios = [off, noDefault, on];

  const mode = () => radios.find((r) => r.input.checked)?.input.value ?? TTL_OFF;
  const sync = () => {
    const m = mode();
    seconds.required = m === TTL_ON;
    const n = Number(seconds.value);
    explain.textContent = EXPLAIN[m](Number.isInteger(n) && n > 0 ? n : null);
  };
  // Typing a number means "On with these seconds".
  seconds.addEventListener("input", () => {
    on.input.checked = true;
    sync();
  });
  radios.forEach((r) => r.input.addEventListener("change", sync));

  const set = (value) => {
    const setting = ttlSetting(value);
    radios.forEach((r) => {
      r.input.checked = r.input.value === setting.mode;
    });
    seconds.value = setting.seconds ?? "";
    sync();
  };
  set(defaultTtl);

  const el = h(
    "fieldset",
    { class: "ttl-field", "aria-describedby": explain.id },
    h("legend", {}, "Time to Live"),
    h("div", { class: "radio-row" }, off.label, noDefault.label, h("span", { class: "ttl-on" }, on.label, seconds, h("span", { class: "unit" }, "seconds"))),
    explain,
  );
  return { el, read: () => defaultTtlFor(mode(), seconds.value), set, seconds };
}
