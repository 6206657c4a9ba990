// Ebb Explorer: start-up, the connection, and routing between views.
//
// The page reads /_explorer/config.json (the key to prefill and whether
// the server has clock control), connects with a key or a resource token
// kept in sessionStorage, and then draws the view named by the location
// hash. With a token it draws only what the token grants (grant.js).

import { Client } from "./api.js";
import { makeSigner, makeTokenSigner } from "./auth.js";
import { Catalog } from "./catalog.js";
import { ServerClock } from "./clock.js";
import { h, replace } from "./dom.js";
import { grantRoute, makeGrant } from "./grant.js";
import { parseRoute, routeHref } from "./router.js";
import { renderClockBar } from "./views/clockbar.js";
import { renderConnect } from "./views/connect.js";
import { renderConnectPanel } from "./views/connectpanel.js";
import { ContainerPage } from "./views/container.js";
import { renderDatabase } from "./views/database.js";
import { renderHome } from "./views/home.js";
import { Sidebar } from "./views/sidebar.js";

const KEY_STORAGE = "ebb-explorer-key";
/** A resource token is kept as JSON, {kind, token, link, mode}, under
 * its own name, so a key session reads as it always has. */
const TOKEN_STORAGE = "ebb-explorer-token";
const TOKEN_KIND = "resource-token";

const ui = {
  main: document.getElementById("main"),
  sidebar: document.getElementById("sidebar"),
  clock: document.getElementById("clock"),
  endpoint: document.getElementById("endpoint"),
  grant: document.getElementById("grant"),
  disconnect: document.getElementById("disconnect"),
  topnav: document.getElementById("topnav"),
  menu: document.getElementById("menu"),
  layout: document.querySelector(".layout"),
};

let session = null;

async function start() {
  wireChrome();
  const config = await loadConfig();
  const savedKey = sessionStorage.getItem(KEY_STORAGE);
  const savedGrant = savedKey ? null : readSavedGrant();
  if (savedKey || savedGrant) {
    try {
      if (savedKey) await connect(savedKey, config);
      else await connectWithToken(savedGrant);
      return;
    } catch (e) {
      forget();
      showConnect(config, `The saved ${savedKey ? "key" : "resource token"} no longer works: ${e.message}`);
      return;
    }
  }
  showConnect(config);
}

/** readSavedGrant reads the resource token this tab connected with;
 * null when there is none (or what is kept is not one). */
function readSavedGrant() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(TOKEN_STORAGE));
    return saved?.kind === TOKEN_KIND ? makeGrant(saved) : null;
  } catch {
    return null;
  }
}

/** forget drops the key or token this tab connected with. */
function forget() {
  sessionStorage.removeItem(KEY_STORAGE);
  sessionStorage.removeItem(TOKEN_STORAGE);
}

async function loadConfig() {
  try {
    const res = await fetch("config.json", { cache: "no-store" });
    return res.ok ? await res.json() : {};
  } catch {
    return {};
  }
}

/** wireChrome sets up the parts of the page outside the views. */
function wireChrome() {
  ui.endpoint.textContent = location.host;
  document.querySelector(".skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    ui.main.focus();
  });
  ui.disconnect.addEventListener("click", () => {
    forget();
    location.hash = "#/";
    location.reload();
  });
  ui.menu.addEventListener("click", () => setMenu(ui.menu.getAttribute("aria-expanded") !== "true"));
}

function setMenu(open) {
  ui.menu.setAttribute("aria-expanded", String(open));
  ui.layout.classList.toggle("menu-open", open);
}

function showConnect(config, reason) {
  document.body.classList.remove("connected");
  renderConnect(ui.main, { config, reason, connect: (key) => connect(key, config), connectWithToken });
}

/** connect checks the key with a signed GET / and opens the explorer. */
async function connect(key, config) {
  const client = new Client(await makeSigner(key));
  try {
    await client.account();
  } catch (e) {
    if (e.status === 401) throw new Error(`The server refused this key: ${e.message}`);
    throw e;
  }
  forget();
  sessionStorage.setItem(KEY_STORAGE, key);
  const clock = new ServerClock(client);
  await clock.detect(config);
  open({ client, clock, key, grant: null });
}

/**
 * connectWithToken checks a resource token by reading the account,
 * which any valid token may, and the granted container (an item's token
 * cannot read its container, so only the account is read for one), and
 * opens the explorer on what the token grants.
 */
async function connectWithToken(grant) {
  const client = new Client(makeTokenSigner(grant.token));
  try {
    await client.account();
    if (!grant.item) await client.container(grant.db, grant.coll);
  } catch (e) {
    if (e.status === 401 || e.status === 403) throw new Error(`The server refused this resource token for ${grant.link}: ${e.message}`);
    throw e;
  }
  forget();
  sessionStorage.setItem(TOKEN_STORAGE, JSON.stringify({ kind: TOKEN_KIND, token: grant.token, link: grant.link, mode: grant.mode }));
  // The clock is read and moved through /_ebb, which needs a key: with a
  // token the page keeps to its own clock and shows no clock control,
  // whatever config.json says.
  open({ client, clock: new ServerClock(client), key: null, grant });
}

/** open shows the explorer for a checked key or token. */
function open({ client, clock, key, grant }) {
  const catalog = new Catalog(client);
  // page is the drawn container page (tabs switch inside it); route is
  // the route it was drawn for; key is the key the tab connected with,
  // which the Connect page shows; grant is what the resource token the
  // tab connected with grants instead (null with a key).
  session = { client, clock, catalog, key, grant, sidebar: new Sidebar(ui.sidebar, catalog, grant), page: null, route: null };
  renderClockBar(ui.clock, clock);
  showGrant(grant);
  document.body.classList.add("connected");
  ui.sidebar.hidden = false;
  ui.disconnect.hidden = false;
  ui.menu.hidden = false;
  ui.topnav.hidden = false;
  window.addEventListener("hashchange", () => route(true));
  route(false);
}

function navigate(target) {
  const href = routeHref(target);
  if (location.hash === href) route(true);
  else location.hash = href;
}

/** showGrant says in the top bar that the tab uses a resource token,
 * and for what. */
function showGrant(grant) {
  if (!grant) return;
  replace(ui.grant, `Resource token (${grant.mode}) for `, h("code", {}, grant.link));
  ui.grant.hidden = false;
  ui.menu.textContent = "Container";
}

/** route draws the view for the current hash. Within one container only
 * the tab panel changes. */
function route(userAction) {
  let target = parseRoute(location.hash);
  if (session.grant) {
    // Every page but the granted container's (and Connect) would meet
    // 403s: draw that container instead, and say so in the address.
    const granted = grantRoute(session.grant, target);
    if (routeHref(granted) !== routeHref(target)) history.replaceState(null, "", routeHref(granted));
    target = granted;
  }
  document.title = pageTitle(target);
  const previous = session.route;
  session.route = target;
  session.sidebar.select(target);
  for (const link of ui.topnav.querySelectorAll("a")) {
    if (link.dataset.page === target.page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  setMenu(false);
  const samePage = previous && previous.page === "container" && target.page === "container" && previous.db === target.db && previous.coll === target.coll;
  if (samePage && session.page) {
    session.page.show(target.tab);
    return;
  }
  session.page?.leave?.();
  session.page = null;
  const el = document.createElement("div");
  el.className = "view";
  ui.main.replaceChildren(el);
  const ctx = { client: session.client, clock: session.clock, catalog: session.catalog, key: session.key, grant: session.grant, navigate };
  const drawn = draw(el, ctx, target);
  if (userAction) drawn.then(() => el.querySelector("h1")?.focus());
}

function pageTitle(target) {
  switch (target.page) {
    case "database":
      return `${target.db} · Ebb Explorer`;
    case "container":
      return `${target.coll} · ${target.db} · Ebb Explorer`;
    case "connect":
      return "Connect · Ebb Explorer";
    default:
      return "Ebb Explorer";
  }
}

async function draw(el, ctx, target) {
  switch (target.page) {
    case "database":
      return renderDatabase(el, ctx, target.db);
    case "container":
      session.page = new ContainerPage(ctx, target.db, target.coll);
      return session.page.mount(el, target.tab);
    case "connect":
      return renderConnectPanel(el, ctx);
    default:
      return renderHome(el, ctx);
  }
}

start();
