// The Connect page: what a program needs to reach this server — the
// endpoint, the key and the connection string (the key hidden until
// asked for), the server's certificate over TLS, and a client for each
// SDK, ready to paste. The key is the one this tab connected with.
//
// A tab connected with a resource token shows that token and the link of
// what it grants instead, and no snippets: each SDK takes a token in its
// own way, keyed by that link.

import { copyText, h, replace, uid } from "../dom.js";
import { connectionString, snippets } from "../snippets.js";

/** What the page shows in place of the key (or token) while it is hidden. */
const HIDDEN_KEY = "••••••••••••••••";

/** The server's certificate, served beside the page (only over TLS). */
const CERTIFICATE = "/_explorer/emulator.pem";

export function renderConnectPanel(el, ctx) {
  const endpoint = `${location.origin}/`;
  const tls = location.protocol === "https:";
  const announce = h("p", { class: "visually-hidden", role: "status" });
  const grant = ctx.grant;
  // secret is what the tab connected with: the key, or the token.
  const secret = grant ? grant.token : ctx.key;
  const noun = grant ? "token" : "key";
  let shown = false;

  // Each value is drawn from the secret as shown; copies take the real one.
  const values = [];
  const value = (text) => {
    const code = h("code", { class: "value" });
    values.push({ code, text });
    return code;
  };
  const copy = (what, text) =>
    h(
      "button",
      {
        type: "button",
        class: "button small",
        "aria-label": `Copy ${what}`,
        onclick: async () => {
          try {
            await copyText(text(secret));
            announce.textContent = `Copied the ${what}.`;
          } catch (e) {
            announce.textContent = `Could not copy the ${what}: ${e.message}`;
          }
        },
      },
      "Copy",
    );
  const draw = () => {
    for (const v of values) v.code.textContent = v.text(shown ? secret : HIDDEN_KEY);
    toggle.textContent = shown ? `Hide ${noun}` : `Show ${noun}`;
    toggle.setAttribute("aria-pressed", String(shown));
  };
  const toggle = h("button", {
    type: "button",
    class: "button small",
    onclick: () => {
      shown = !shown;
      draw();
    },
  });

  const row = (label, code, ...buttons) => h("div", { class: "connect-row" }, h("dt", {}, label), h("dd", {}, code, h("span", { class: "connect-buttons" }, buttons)));
  const account = grant
    ? h(
        "section",
        { class: "card", "aria-labelledby": "connect-account-title" },
        h("h2", { id: "connect-account-title" }, "Endpoint and resource token"),
        h(
          "dl",
          { class: "connect-values" },
          row("Endpoint", value(() => endpoint), copy("endpoint", () => endpoint)),
          row("Resource link", value(() => grant.link), copy("resource link", () => grant.link)),
          row("Permission mode", value(() => grant.mode)),
          row("Resource token", value((token) => token), toggle, copy("token", (token) => token)),
        ),
        h(
          "p",
          { class: "hint" },
          "This is the resource token this tab connected with. Anyone holding it can do what its permission grants until it expires. An SDK takes it keyed by the resource link, as the JavaScript SDK's resourceTokens option does.",
        ),
      )
    : h(
        "section",
        { class: "card", "aria-labelledby": "connect-account-title" },
        h("h2", { id: "connect-account-title" }, "Endpoint and key"),
        h(
          "dl",
          { class: "connect-values" },
          row("Endpoint", value(() => endpoint), copy("endpoint", () => endpoint)),
          row("Key", value((key) => key), toggle, copy("key", (key) => key)),
          row("Connection string", value((key) => connectionString(endpoint, key)), copy("connection string", (key) => connectionString(endpoint, key))),
        ),
        h("p", { class: "hint" }, "This is the key this tab connected with. Anyone holding it can read and change every database on this server."),
      );

  const certificate = h(
    "section",
    { class: "card", "aria-labelledby": "connect-cert-title" },
    h("h2", { id: "connect-cert-title" }, "Certificate"),
    tls
      ? [
          h("p", {}, h("a", { href: CERTIFICATE, download: "emulator.pem", class: "button" }, "Download the certificate (emulator.pem)")),
          h("p", { class: "hint" }, "The server's TLS certificate. Trust it where your client runs, as each snippet below says, or the client refuses the connection."),
        ]
      : h("p", { class: "muted" }, "This server speaks plain HTTP, so there is no certificate to trust."),
  );

  // codeOf(id)(key) is one SDK's snippet with this key.
  const codeOf = (id) => (key) => snippets(endpoint, key, { tls }).find((s) => s.id === id).code;
  const code = grant
    ? null
    : h(
        "section",
        { class: "card", "aria-labelledby": "connect-code-title" },
        h("h2", { id: "connect-code-title" }, "Code"),
        snippets(endpoint, HIDDEN_KEY, { tls }).map((s) => {
          const titleId = uid(`snippet-${s.id}`);
          return h(
            "section",
            { class: "snippet", "aria-labelledby": titleId },
            h("div", { class: "card-head" }, h("h3", { id: titleId }, s.name, " ", h("span", { class: "muted small" }, s.package)), copy(`${s.name} snippet`, codeOf(s.id))),
            h("pre", { class: "code", tabindex: "0", "aria-label": `${s.name} snippet` }, value(codeOf(s.id))),
          );
        }),
      );

  replace(
    el,
    h("div", { class: "page-head" }, h("div", {}, h("h1", { tabindex: "-1" }, "Connect"), h("p", { class: "lead" }, "Point an SDK or a tool at this server with these settings."))),
    account,
    certificate,
    code,
    announce,
  );
  draw();
}
