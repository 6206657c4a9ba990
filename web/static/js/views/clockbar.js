// The server clock in the top bar: its time and, with clock control, a
// form to advance it so TTL fires without waiting.

import { busy, h, replace } from "../dom.js";
import { formatTime } from "../format.js";

/** renderClockBar fills el for the clock; it stays empty when the server
 * runs on the wall clock. */
export function renderClockBar(el, clock) {
  if (!clock.controlled) {
    el.hidden = true;
    return;
  }
  const time = h("time", { class: "clock-time" });
  const announce = h("span", { class: "visually-hidden", role: "status" });
  const show = () => {
    time.textContent = formatTime(clock.epochSeconds);
    time.dateTime = clock.nowText ?? "";
  };
  clock.addEventListener("change", show);
  show();

  const seconds = h("input", {
    type: "number",
    min: "0",
    step: "any",
    value: "10",
    required: true,
    class: "clock-seconds",
    "aria-label": "Seconds to advance the server clock by",
  });
  const error = h("span", { class: "clock-error", role: "alert" });
  const form = h(
    "form",
    { class: "clock-form" },
    seconds,
    h("span", { class: "clock-unit", "aria-hidden": "true" }, "s"),
    h("button", { type: "submit", class: "button small" }, "Advance clock"),
    error,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const n = Number(seconds.value);
    await busy(form, async () => {
      try {
        await clock.advance(n);
        announce.textContent = `Server clock advanced by ${n} s.`;
      } catch (e) {
        error.textContent = e.message;
      }
    });
  });
  replace(el, h("span", { class: "clock-label" }, "Server time"), time, form, announce);
  el.hidden = false;
}
