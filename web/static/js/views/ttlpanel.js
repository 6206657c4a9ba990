// The Time to Live tab, beyond what the portal shows: the container's
// setting, and Ebb's purge statistics (backlog, next deadline, purge lag
// and upcoming expiries) from GET /_ebb/containers/{db}/{coll}/ttl when
// the server provides that endpoint. Fields are drawn as they come:
// known ones under their labels, any other number under its own name.
// Below them, the deletes by partition key in progress: like expired
// items, their items are hidden at once and purged in the background.

import { ApiError } from "../api.js";
import { Notice, h, replace } from "../dom.js";
import { formatRelative, formatTime } from "../format.js";
import { routeHref } from "../router.js";
import { describeTtl, formatSeconds } from "../ttl.js";
import { partitionDeletesCard } from "./pkdeletestatus.js";

/** Known statistics, in the order they are shown, with a label and a
 * line of explanation. */
const STAT_LABELS = {
  backlog: ["Backlog", "Expired items not yet purged"],
  nextDeadline: ["Next deadline", "When the next item expires"],
  purgeLagSeconds: ["Purge lag", "How long after expiry items are purged"],
  oldestUnpurgedAgeSeconds: ["Oldest unpurged", "How long ago the oldest unpurged item expired"],
};

/** Fields not drawn as tiles: the setting (shown above), the server's
 * time, and a second form of the next deadline. */
const NOT_TILES = new Set(["defaultTtl", "mode", "now", "nextDeadlineEpoch"]);

const UPCOMING = [
  ["minute", "Next minute"],
  ["hour", "Next hour"],
  ["day", "Next day"],
  ["week", "Next week"],
];

/** Servers without the statistics endpoint are asked once per page load. */
let statsUnavailable = false;

export function renderTtlPanel(el, ctx, page) {
  const notice = new Notice();
  const stats = h("div", { class: "ttl-stats" }, h("p", { class: "muted" }, "Loading…"));
  const refresh = h("button", { type: "button", class: "button", onclick: () => loadStats(stats, notice, ctx, page) }, "Refresh");
  replace(
    el,
    settingCard(ctx, page),
    h("section", { class: "card", "aria-labelledby": "ttl-stats-title" }, h("div", { class: "card-head" }, h("h2", { id: "ttl-stats-title" }, "Purge statistics"), refresh), notice.el, stats),
    partitionDeletesCard(ctx, page).el,
  );
  loadStats(stats, notice, ctx, page);
  ctx.clock.addEventListener("change", () => loadStats(stats, notice, ctx, page), { signal: ctx.signal });
}

function settingCard(ctx, page) {
  const settings = routeHref({ page: "container", db: page.db, coll: page.coll, tab: "settings" });
  const clockNote = ctx.clock.controlled
    ? h("p", { class: "hint" }, "The server runs on a manual clock: advance it from the top bar to make items expire without waiting.")
    : null;
  return h(
    "section",
    { class: "card", "aria-labelledby": "ttl-setting-title" },
    h("h2", { id: "ttl-setting-title" }, "Setting"),
    h("p", {}, h("strong", {}, describeTtl(page.container.defaultTtl)), " · ", h("a", { href: settings }, "Change in Settings")),
    clockNote,
  );
}

async function loadStats(el, notice, ctx, page) {
  notice.clear();
  if (statsUnavailable) {
    replace(el, unavailable());
    return;
  }
  try {
    const data = await ctx.client.ttlStats(page.db, page.coll);
    replace(el, drawStats(data ?? {}, ctx.clock.now()));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && !(await containerGone(ctx, page))) {
      statsUnavailable = true;
      replace(el, unavailable());
      return;
    }
    el.replaceChildren();
    notice.error(e);
  }
}

/** containerGone tells a 404 for a deleted container from a 404 for a
 * server that lacks the endpoint. */
async function containerGone(ctx, page) {
  try {
    await ctx.client.container(page.db, page.coll);
    return false;
  } catch {
    return true;
  }
}

function unavailable() {
  return h("p", { class: "notice info", role: "status" }, "This server does not provide TTL statistics (it has no GET /_ebb/containers/{db}/{coll}/ttl endpoint).");
}

function drawStats(data, now) {
  const tiles = statFields(data).map(([name, value]) => tile(name, value, now));
  return [tiles.length ? h("dl", { class: "tiles" }, tiles) : h("p", { class: "muted" }, "The server sent no statistics."), histogram(data.upcoming)];
}

/**
 * statFields picks what to draw as tiles: the known statistics first (the
 * next deadline even when it is null or a date string), then any other
 * number the server sends, under a name made from its key.
 */
function statFields(data) {
  const fields = [];
  for (const name of Object.keys(STAT_LABELS)) {
    if (name === "nextDeadline" && (name in data || "nextDeadlineEpoch" in data)) {
      fields.push([name, data.nextDeadlineEpoch ?? data.nextDeadline]);
    } else if (typeof data[name] === "number") {
      fields.push([name, data[name]]);
    }
  }
  for (const [name, value] of numericFields(data)) {
    if (!(name in STAT_LABELS) && !NOT_TILES.has(name) && !name.startsWith("upcoming.")) fields.push([name, value]);
  }
  return fields;
}

/** numericFields flattens the numbers in data as [dotted name, value]. */
function numericFields(data, prefix = "") {
  const out = [];
  for (const [k, v] of Object.entries(data ?? {})) {
    const name = prefix + k;
    if (typeof v === "number") out.push([name, v]);
    else if (v && typeof v === "object" && !Array.isArray(v)) out.push(...numericFields(v, `${name}.`));
  }
  return out;
}

function tile(name, value, now) {
  const [label, hint] = STAT_LABELS[name] ?? [humanize(name), null];
  return h("div", { class: "tile", "data-name": name }, h("dt", {}, label), h("dd", {}, formatStat(name, value, now)), hint ? h("dd", { class: "hint" }, hint) : null);
}

function formatStat(name, value, now) {
  if (name === "nextDeadline") {
    if (value === null || value === undefined || value === 0) return "none";
    const at = typeof value === "number" ? value : Date.parse(value) / 1000;
    if (Number.isNaN(at)) return String(value);
    return [formatTime(at), " ", h("span", { class: "muted small" }, `(${formatRelative(at, now)})`)];
  }
  if (/seconds$/i.test(name)) return Number.isInteger(value) ? formatSeconds(value) : `${value.toFixed(2)} s`;
  return Number(value).toLocaleString("en-US");
}

/** humanize turns "purgedTotal" into "Purged total". */
function humanize(name) {
  const words = name.replace(/\./g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function histogram(upcoming) {
  if (!upcoming || typeof upcoming !== "object") return null;
  const rows = UPCOMING.filter(([k]) => typeof upcoming[k] === "number");
  if (!rows.length) return null;
  const max = Math.max(1, ...rows.map(([k]) => upcoming[k]));
  return h(
    "figure",
    { class: "histogram" },
    h("figcaption", {}, "Upcoming expiries", h("span", { class: "hint" }, "Items due within each window; a longer window counts the shorter ones too.")),
    h(
      "dl",
      {},
      rows.map(([k, label]) => {
        const bar = h("span", { class: "bar", "aria-hidden": "true" });
        bar.style.setProperty("--share", String(upcoming[k] / max));
        return h("div", { class: "histogram-row" }, h("dt", {}, label), h("dd", {}, h("span", { class: "bar-track" }, bar), h("span", { class: "count" }, upcoming[k].toLocaleString("en-US"))));
      }),
    ),
  );
}
