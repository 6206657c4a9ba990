// The connect form: a master key or a connection string for this server,
// or a resource token and the resource its permission grants.

import { parseCredential, parseResourceToken } from "../auth.js";
import { Notice, busy, field, h, replace, uid } from "../dom.js";
import { MODE_ALL, MODE_READ, makeGrant, permissionFields } from "../grant.js";

/**
 * renderConnect shows the form in el. connect(key) and
 * connectWithToken(grant) are async and throw when the server refuses
 * the credential; reason explains why the form is shown again (for
 * example a key from an earlier session that no longer works).
 */
export function renderConnect(el, { config, connect, connectWithToken, reason }) {
  const notice = new Notice();
  const key = keyFields(config);
  const token = tokenFields();
  const kinds = [
    { value: "key", label: "Account key", fields: key },
    { value: "token", label: "Resource token", fields: token },
  ];
  const name = uid("credential-kind");
  for (const k of kinds) k.input = h("input", { type: "radio", name, value: k.value, checked: k.value === "key" });
  const kind = () => kinds.find((k) => k.input.checked).value;
  // The other kind's fields are hidden and disabled, so that their
  // required inputs do not stop the form from submitting.
  const choose = () => {
    for (const k of kinds) {
      const off = k.value !== kind();
      k.fields.el.hidden = off;
      k.fields.el.disabled = off;
    }
    notice.clear();
  };
  kinds.forEach((k) => k.input.addEventListener("change", choose));
  choose();
  if (reason) notice.error(reason);

  const form = h(
    "form",
    { class: "card connect-form", "aria-labelledby": "connect-title" },
    h("h1", { id: "connect-title" }, "Connect to Ebb"),
    h("p", { class: "lead" }, `The explorer talks to ${location.origin} through the Cosmos DB REST API and signs each request in your browser. The key or token stays in this tab's session storage.`),
    h("fieldset", {}, h("legend", {}, "Connect with"), h("div", { class: "radio-row" }, kinds.map((k) => h("label", { class: "radio" }, k.input, k.label)))),
    key.el,
    token.el,
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Connect")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    const fields = kind() === "key" ? key : token;
    let attempt;
    try {
      attempt = fields.read({ connect, connectWithToken });
    } catch (e) {
      notice.error(e);
      e.input?.focus();
      return;
    }
    await busy(form, async () => {
      try {
        await attempt();
      } catch (e) {
        notice.error(e);
      }
    });
  });
  replace(el, h("div", { class: "connect" }, form));
  key.input.focus();
}

/** inputError is an Error for the user that names the input to fix. */
function inputError(e, input) {
  e.input = input;
  input.setAttribute("aria-invalid", "true");
  return e;
}

/** secretInput is a password input that a checkbox reveals. */
function secretInput(attrs, revealLabel) {
  const input = h("input", { type: "password", autocomplete: "off", spellcheck: "false", required: true, class: "mono", ...attrs });
  const reveal = h("input", { type: "checkbox" });
  reveal.addEventListener("change", () => {
    input.type = reveal.checked ? "text" : "password";
  });
  input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
  return { input, reveal: h("label", { class: "checkbox" }, reveal, revealLabel) };
}

/**
 * keyFields are the account key's fields: {el, input, read}. read
 * checks what was typed and returns the connect attempt, or throws.
 */
function keyFields(config) {
  const prefilled = Boolean(config?.emulatorKey);
  const { input, reveal } = secretInput({ name: "credential", value: config?.emulatorKey ?? "" }, "Show key");
  const hint = prefilled
    ? "Prefilled with the emulator's well-known key, which this server uses."
    : "Paste the server's master key (base64) or a connection string: AccountEndpoint=…;AccountKey=…;";
  const el = h("fieldset", { class: "credential" }, field("Account key or connection string", input, hint), reveal);
  const read = ({ connect }) => {
    let credential;
    try {
      credential = parseCredential(input.value);
    } catch (e) {
      throw inputError(e, input);
    }
    return () => connect(credential.key);
  };
  return { el, input, read };
}

/**
 * tokenFields are a resource token's fields: the token, the link of the
 * resource its permission grants and the permission's mode. Pasting the
 * whole permission (its JSON) into the token's input fills all three.
 */
function tokenFields() {
  const { input, reveal } = secretInput({ name: "token" }, "Show token");
  const link = h("input", { type: "text", name: "resource", autocomplete: "off", spellcheck: "false", required: true, class: "mono", placeholder: "dbs/shop/colls/carts" });
  link.addEventListener("input", () => link.removeAttribute("aria-invalid"));
  const name = uid("mode");
  const modes = [
    { value: MODE_READ, label: "Read: list, read and query items" },
    { value: MODE_ALL, label: "All: also create, change and delete them" },
  ].map((m) => ({ ...m, input: h("input", { type: "radio", name, value: m.value, checked: m.value === MODE_READ }) }));
  const mode = () => modes.find((m) => m.input.checked).value;
  input.addEventListener("input", () => {
    const permission = permissionFields(input.value);
    if (!permission) return;
    input.value = permission.token;
    link.value = permission.link;
    link.removeAttribute("aria-invalid");
    modes.forEach((m) => {
      m.input.checked = m.value === permission.mode;
    });
  });
  const el = h(
    "fieldset",
    { class: "credential" },
    field("Token", input, "A permission's _token, type=resource&ver=1.0&sig=…, or the whole permission as JSON."),
    reveal,
    field("Resource link", link, "What the permission grants: a container, dbs/{database}/colls/{container}, or an item, …/docs/{id}."),
    h("fieldset", {}, h("legend", {}, "Permission mode"), h("div", { class: "radio-row" }, modes.map((m) => h("label", { class: "radio" }, m.input, m.label)))),
  );
  const read = ({ connectWithToken }) => {
    let token;
    try {
      token = parseResourceToken(input.value);
    } catch (e) {
      throw inputError(e, input);
    }
    let grant;
    try {
      grant = makeGrant({ token, link: link.value, mode: mode() });
    } catch (e) {
      throw inputError(e, link);
    }
    return () => connectWithToken(grant);
  };
  return { el, input, read };
}
