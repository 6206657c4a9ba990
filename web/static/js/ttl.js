// Time to Live as the page shows it: the portal's three settings and an
// item's expiry instant. The rules mirror the server's (internal/ttl):
//
//   container defaultTtl  absent → Off; -1 → On (no default); n → On, n s
//   item ttl              -1 → never; n > 0 → n s after _ts;
//                         absent (or not a valid ttl) → the default
//   nothing expires while the container's TTL is Off.

/** MAX_TTL is the largest ttl Cosmos accepts (int32 max). */
export const MAX_TTL = 2147483647;

/** Modes of the portal's Time to Live setting. */
export const TTL_OFF = "off";
export const TTL_NO_DEFAULT = "on-no-default";
export const TTL_ON = "on";

/** ttlSetting reads a container's defaultTtl as {mode, seconds}. */
export function ttlSetting(defaultTtl) {
  if (defaultTtl === undefined || defaultTtl === null) return { mode: TTL_OFF, seconds: null };
  if (defaultTtl === -1) return { mode: TTL_NO_DEFAULT, seconds: null };
  return { mode: TTL_ON, seconds: defaultTtl };
}

/**
 * defaultTtlFor turns a setting back into the container property:
 * undefined (Off: the property is left out), -1, or the seconds. It
 * throws an Error with a user-facing message for seconds out of range.
 */
export function defaultTtlFor(mode, secondsText) {
  if (mode === TTL_OFF) return undefined;
  if (mode === TTL_NO_DEFAULT) return -1;
  const text = String(secondsText ?? "").trim();
  const n = Number(text);
  if (text === "" || !Number.isInteger(n) || n < 1 || n > MAX_TTL) {
    throw new Error(`Time to Live must be a whole number of seconds from 1 to ${MAX_TTL}.`);
  }
  return n;
}

/** describeTtl is a short label for a container's defaultTtl. */
export function describeTtl(defaultTtl) {
  const { mode, seconds } = ttlSetting(defaultTtl);
  if (mode === TTL_OFF) return "TTL off";
  if (mode === TTL_NO_DEFAULT) return "TTL on (no default)";
  return `TTL ${formatSeconds(seconds)}`;
}

/** formatSeconds writes a duration compactly: "10 s", "5 min", "2 h 30 min". */
export function formatSeconds(total) {
  const units = [
    ["d", 86400],
    ["h", 3600],
    ["min", 60],
    ["s", 1],
  ];
  const parts = [];
  let rest = Math.round(total);
  for (const [name, size] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${name}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.length ? parts.join(" ") : "0 s";
}

/** validItemTtl reports whether v is a ttl the server honours. */
export function validItemTtl(v) {
  return Number.isInteger(v) && (v === -1 || (v >= 1 && v <= MAX_TTL));
}

/**
 * expiresAt returns the epoch second at which an item expires under the
 * container's defaultTtl, or null when it never does.
 */
export function expiresAt(item, defaultTtl) {
  const { mode, seconds } = ttlSetting(defaultTtl);
  if (mode === TTL_OFF || typeof item._ts !== "number") return null;
  const own = validItemTtl(item.ttl) ? item.ttl : 0;
  if (own > 0) return item._ts + own;
  if (own === -1 || mode === TTL_NO_DEFAULT) return null;
  return item._ts + seconds;
}

/** isExpired reports whether an item expiring at `at` has expired by now
 * (both epoch seconds): expiry happens when _ts + ttl <= now. */
export function isExpired(at, now) {
  return at !== null && at <= now;
}
