// A few helpers for building the page with the DOM API (no innerHTML, so
// server data can never turn into markup).

/**
 * h creates an element: h("a", {href: "#/", class: "x"}, "text", child).
 * Attributes named on* with a function value become event listeners;
 * true/false toggle boolean attributes; null and undefined are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/** append adds children (nodes, strings, arrays, or nothing) to el. */
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** replaceChildren empties el and adds children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let uniqueCounter = 0;

/** uid returns an id unique on the page, for label/aria wiring. */
export function uid(prefix) {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

/** field wraps a control with its label and an optional hint. */
export function field(label, control, hint) {
  const id = control.id || uid("f");
  control.id = id;
  const hintEl = hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintEl);
}

/** Notice shows the outcome of an action: an error (role=alert) or a
 * confirmation (role=status), in one place per view. */
export class Notice {
  constructor() {
    this.el = h("div", { class: "notice-area" });
  }

  error(err) {
    const text = err instanceof Error ? err.message : String(err);
    replace(this.el, h("div", { class: "notice error", role: "alert" }, text));
  }

  ok(text) {
    replace(this.el, h("div", { class: "notice ok", role: "status" }, text));
  }

  info(text) {
    replace(this.el, h("div", { class: "notice info", role: "status" }, text));
  }

  clear() {
    this.el.replaceChildren();
  }
}

/** busy disables a form's controls while an action runs. */
export async function busy(form, action) {
  const controls = [...form.querySelectorAll("button, input, textarea, select")].filter((c) => !c.disabled);
  controls.forEach((c) => {
    c.disabled = true;
  });
  const focused = document.activeElement;
  form.setAttribute("aria-busy", "true");
  try {
    return await action();
  } finally {
    controls.forEach((c) => {
      c.disabled = false;
    });
    form.removeAttribute("aria-busy");
    if (focused instanceof HTMLElement && focused.isConnected && document.activeElement === document.body) focused.focus();
  }
}

/** confirmDialog asks a yes/no question in the page's <dialog>. */
export function confirmDialog(question, confirmLabel) {
  const dialog = document.getElementById("confirm");
  dialog.querySelector("[data-question]").textContent = question;
  const yes = dialog.querySelector("[data-confirm]");
  yes.textContent = confirmLabel;
  const cancel = dialog.querySelector("[data-cancel]");
  return new Promise((resolve) => {
    const onYes = () => dialog.close("confirm");
    const onNo = () => dialog.close("cancel");
    yes.addEventListener("click", onYes);
    cancel.addEventListener("click", onNo);
    dialog.addEventListener(
      "close",
      () => {
        yes.removeEventListener("click", onYes);
        cancel.removeEventListener("click", onNo);
        resolve(dialog.returnValue === "confirm");
      },
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * copyText puts text on the clipboard: the Clipboard API where the page
 * has it (a secure context: https, or localhost), and otherwise a
 * selected, off-screen textarea and the copy command.
 */
export async function copyText(text) {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h("textarea", { class: "visually-hidden", readonly: true, "aria-hidden": "true" });
  area.value = text;
  document.body.append(area);
  try {
    area.select();
    if (!document.execCommand("copy")) throw new Error("The browser did not allow copying; select the text and copy it yourself.");
  } finally {
    area.remove();
  }
}
