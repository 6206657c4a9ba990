// The connect form: a master key or a connection string for this server.

import { parseCredential } from "../auth.js";
import { Notice, busy, field, h, replace } from "../dom.js";

/**
 * renderConnect shows the form in el. connect(key) is async and throws
 * when the server refuses the key; reason explains why the form is shown
 * again (for example a key from an earlier session that no longer works).
 */
export function renderConnect(el, { config, connect, reason }) {
  const notice = new Notice();
  if (reason) notice.error(reason);
  const prefilled = Boolean(config?.emulatorKey);
  const input = h("input", {
    type: "password",
    name: "credential",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    class: "mono",
    value: config?.emulatorKey ?? "",
  });
  const reveal = h("input", { type: "checkbox", id: "show-key" });
  reveal.addEventListener("change", () => {
    input.type = reveal.checked ? "text" : "password";
  });
  const hint = prefilled
    ? "Prefilled with the emulator's well-known key, which this server uses."
    : "Paste the server's master key (base64) or a connection string: AccountEndpoint=…;AccountKey=…;";
  const form = h(
    "form",
    { class: "card connect-form", "aria-labelledby": "connect-title" },
    h("h1", { id: "connect-title" }, "Connect to Ebb"),
    h("p", { class: "lead" }, `The explorer talks to ${location.origin} through the Cosmos DB REST API and signs each request in your browser. The key stays in this tab's session storage.`),
    field("Account key or connection string", input, hint),
    h("label", { class: "checkbox" }, reveal, "Show key"),
    notice.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "button primary" }, "Connect")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice.clear();
    let credential;
    try {
      credential = parseCredential(input.value);
    } catch (e) {
      notice.error(e);
      input.focus();
      return;
    }
    await busy(form, async () => {
      try {
        await connect(credential.key);
      } catch (e) {
        notice.error(e);
      }
    });
  });
  replace(el, h("div", { class: "connect" }, form));
  input.focus();
}
