// Ebb Explorer: start-up, the connection, and routing between views.
//
// The page reads /_explorer/config.json (the key to prefill and whether
// the server has clock control), connects with a key kept in
// sessionStorage, and then draws the view named by the location hash.

import { Client } from "./api.js";
import { makeSigner } from "./auth.js";
import { Catalog } from "./catalog.js";
import { ServerClock } from "./clock.js";
import { parseRoute, routeHref } from "./router.js";
import { renderClockBar } from "./views/clockbar.js";
import { renderConnect } from "./views/connect.js";
import { renderConnectPanel } from "./views/connectpanel.js";
import { ContainerPage } from "./views/container.js";
import { renderDatabase } from "./views/database.js";
import { renderHome } from "./views/home.js";
import { Sidebar } from "./views/sidebar.js";

const KEY_STORAGE = "ebb-explorer-key";

const ui = {
  main: document.getElementById("main"),
  sidebar: document.getElementById("sidebar"),
  clock: document.getElementById("clock"),
  endpoint: document.getElementById("endpoint"),
  disconnect: document.getElementById("disconnect"),
  topnav: document.getElementById("topnav"),
  menu: document.getElementById("menu"),
  layout: document.querySelector(".layout"),
};

let session = null;

async function start() {
  wireChrome();
  const config = await loadConfig();
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    try {
      await connect(saved, config);
      return;
    } catch (e) {
      sessionStorage.removeItem(KEY_STORAGE);
      showConnect(config, `The saved key no longer works: ${e.message}`);
      return;
    }
  }
  showConnect(config);
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
    sessionStorage.removeItem(KEY_STORAGE);
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
  renderConnect(ui.main, { config, reason, connect: (key) => connect(key, config) });
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
  sessionStorage.setItem(KEY_STORAGE, key);
  const clock = new ServerClock(client);
  await clock.detect(config);
  const catalog = new Catalog(client);
  // page is the drawn container page (tabs switch inside it); route is
  // the route it was drawn for; key is the key the tab connected with,
  // which the Connect page shows.
  session = { client, clock, catalog, key, sidebar: new Sidebar(ui.sidebar, catalog), page: null, route: null };
  renderClockBar(ui.clock, clock);
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

/** route draws the view for the current hash. Within one container only
 * the tab panel changes. */
function route(userAction) {
  const target = parseRoute(location.hash);
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
  const ctx = { client: session.client, clock: session.clock, catalog: session.catalog, key: session.key, navigate };
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
