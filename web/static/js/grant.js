// What a resource token grants, as the page connected with one uses it:
// the resource its permission names and the permission's mode. DOM-free,
// so the node suite checks it.
//
// The server lets a token read the account and act on its resource and
// what lies below it; listing databases or containers, changing a
// container and Ebb's /_ebb routes need a key and answer 403 or 401. So
// a session with a token shows one container: for a container's token,
// that container's items and queries; for an item's token, that item
// alone, since the token cannot even read the container that holds it.
// The token does not say its mode, so the user gives it (or pastes the
// whole permission, which does).

/** The permission modes: Read allows reads and queries, All writes too. */
export const MODE_READ = "Read";
export const MODE_ALL = "All";

/** The container tabs that work with a token; the others (scripts,
 * settings, Time to Live) are for the key holder. */
export const TOKEN_TABS = ["items", "query"];

/**
 * parseResourceLink reads the resource a permission names: a container
 * (dbs/{db}/colls/{coll}) or an item (dbs/{db}/colls/{coll}/docs/{id}),
 * with the names as the permission writes them (not URL-encoded); a
 * leading or trailing "/" is ignored. It returns {link, db, coll, item}
 * (item is null for a container) or throws an Error whose message is
 * meant for the user.
 */
export function parseResourceLink(text) {
  const link = text.trim().replace(/^\/+|\/+$/g, "");
  const s = link.split("/");
  const shaped = (s.length === 4 || (s.length === 6 && s[4] === "docs")) && s[0] === "dbs" && s[2] === "colls" && s.every((part) => part !== "");
  if (!shaped) {
    throw new Error("The resource link names a container, dbs/{database}/colls/{container}, or an item, dbs/{database}/colls/{container}/docs/{id}.");
  }
  return { link, db: s[1], coll: s[3], item: s[5] ?? null };
}

/**
 * permissionFields reads a permission pasted whole, as JSON (the body
 * the server returns when the permission is created or read), and
 * returns {token, link, mode}; null when text is not such a permission.
 */
export function permissionFields(text) {
  let p;
  try {
    p = JSON.parse(text);
  } catch {
    return null;
  }
  if (p === null || typeof p !== "object" || typeof p._token !== "string" || typeof p.resource !== "string") return null;
  const mode = typeof p.permissionMode === "string" && p.permissionMode.toLowerCase() === "all" ? MODE_ALL : MODE_READ;
  return { token: p._token, link: p.resource, mode };
}

/**
 * makeGrant describes a session with a resource token (already checked
 * by parseResourceToken) for the resource at link, with a permission
 * mode: {token, link, db, coll, item, mode, readOnly}. It throws an
 * Error for the user when the link is not a container's or an item's.
 */
export function makeGrant({ token, link, mode }) {
  const resource = parseResourceLink(link);
  const all = mode === MODE_ALL;
  return { token, ...resource, mode: all ? MODE_ALL : MODE_READ, readOnly: !all };
}

/**
 * grantRoute is the route a session with grant draws for target: the
 * Connect page as asked, and otherwise the granted container's page, in
 * the tab asked for when a token can use it. Every other page would
 * only meet refusals.
 */
export function grantRoute(grant, target) {
  if (target.page === "connect") return target;
  const tab = target.page === "container" && TOKEN_TABS.includes(target.tab) ? target.tab : "items";
  return { page: "container", db: grant.db, coll: grant.coll, tab };
}
