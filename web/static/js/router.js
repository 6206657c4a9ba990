// Hash routes, so every view has a link (back/forward and bookmarks work
// and navigation is plain anchors):
//
//   #/                              databases
//   #/connect                       endpoint, key and SDK snippets
//   #/db/{db}                       a database and its containers
//   #/db/{db}/coll/{coll}/{tab}     a container: items, query, scripts,
//                                   settings, ttl

const TABS = ["items", "query", "scripts", "settings", "ttl"];

/** parseRoute reads a location hash; unknown hashes go home. */
export function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "connect" && parts.length === 1) return { page: "connect" };
  if (parts[0] === "db" && parts.length === 2) return { page: "database", db: parts[1] };
  if (parts[0] === "db" && parts[2] === "coll" && (parts.length === 4 || parts.length === 5)) {
    const tab = TABS.includes(parts[4]) ? parts[4] : "items";
    return { page: "container", db: parts[1], coll: parts[3], tab };
  }
  return { page: "home" };
}

/** routeHref writes a route as a hash link. */
export function routeHref(route) {
  const e = encodeURIComponent;
  switch (route.page) {
    case "database":
      return `#/db/${e(route.db)}`;
    case "container":
      return `#/db/${e(route.db)}/coll/${e(route.coll)}/${route.tab ?? "items"}`;
    case "connect":
      return "#/connect";
    default:
      return "#/";
  }
}
