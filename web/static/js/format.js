// Formatting for times, charges and durations shown on the page.

import { formatSeconds } from "./ttl.js";

/** formatTime writes epoch seconds as "2026-11-22 06:24:09 UTC". */
export function formatTime(epochSeconds) {
  const d = new Date(epochSeconds * 1000);
  if (Number.isNaN(d.getTime())) return String(epochSeconds);
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** formatRelative writes how far `at` is from `now` (epoch seconds):
 * "in 10 s", "3 min ago", "now". */
export function formatRelative(at, now) {
  const delta = Math.round(at - now);
  if (delta === 0) return "now";
  return delta > 0 ? `in ${formatSeconds(delta)}` : `${formatSeconds(-delta)} ago`;
}

/** formatCharge writes a request charge in request units. */
export function formatCharge(ru) {
  return `${Number(ru).toFixed(2)} RU`;
}

/** formatJSON pretty-prints a value for display and editing. */
export function formatJSON(value) {
  return JSON.stringify(value, null, 2);
}
