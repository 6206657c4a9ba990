// The Settings tab: Time to Live (Off / On (no default) / On with
// seconds), the indexing policy as JSON, the full-text paths, the vector
// embeddings (read only: they cannot change), and throughput. Saving
// replaces the container with its full body (a body without defaultTtl
// turns TTL off) and the offer with its whole document.

import { Notice, busy, field, h, replace } from "../dom.js";
import { formatJSON } from "../format.js";
import { containerReplaceBody, describeOffer, parseObject } from "../model.js";
import { fullTextPathsOf, fullTextPolicyWith } from "../search.js";
import { fullTextPathsField } from "./fulltextfield.js";
import { ttlField } from "./ttlfield.js";
import { vectorPolicyView } from "./vectorfield.js";

export async function renderSettings(el, ctx, page) {
  const notice = new Notice();
  replace(el, notice.el, h("p", { class: "muted" }, "Loading…"));
  let offer = null;
  let shared = null;
  try {
    offer = await ctx.client.offerFor(page.container._rid);
    if (!offer) shared = await ctx.client.databaseOffer(page.db);
  } catch (e) {
    notice.error(e);
  }
  new SettingsForm(el, ctx, page, notice, offer, shared).draw();
}

class SettingsForm {
  /** offer is the container's own; shared, the database's when the
   * container has none (null when neither has one). */
  constructor(el, ctx, page, notice, offer, shared) {
    this.el = el;
    this.ctx = ctx;
    this.page = page;
    this.notice = notice;
    this.offer = offer;
    this.shared = shared;
  }

  draw() {
    const container = this.page.container;
    this.ttl = ttlField(container.defaultTtl);
    this.indexing = h("textarea", { class: "mono", rows: "12", spellcheck: "false", autocomplete: "off" });
    this.indexing.value = formatJSON(container.indexingPolicy ?? {});
    this.fullText = fullTextPathsField(fullTextPathsOf(container), {
      legend: "Full-text paths",
      hint: "Paths that hold text for FullTextContains and FullTextScore, analyzed in English. A path in the indexing policy's fullTextIndexes must stay here.",
    });
    this.throughput = this.throughputInput();
    const form = h(
      "form",
      { class: "card settings", "aria-label": "Container settings" },
      h("h2", {}, "Settings"),
      this.ttl.el,
      h("div", { class: "settings-section" }, field("Indexing policy (JSON)", this.indexing, 'Indexing mode "none" cannot be combined with Time to Live.')),
      h("div", { class: "settings-section" }, this.fullText.el),
      vectorPolicyView(container),
      h(
        "div",
        { class: "settings-section" },
        this.throughput ? this.throughput.field : h("p", { class: "muted" }, this.noOwnThroughput()),
      ),
      this.notice.el,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", class: "button primary" }, "Save"),
        h("button", { type: "button", class: "button ghost", onclick: () => this.discard() }, "Discard changes"),
      ),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      busy(form, () => this.save());
    });
    replace(this.el, form);
  }

  /** throughputInput edits manual RU/s or the autoscale maximum. */
  throughputInput() {
    const content = this.offer?.content;
    if (!content) return null;
    const autoscale = content.offerAutopilotSettings !== undefined;
    const current = autoscale ? content.offerAutopilotSettings.maxThroughput : content.offerThroughput;
    const input = h("input", { type: "number", min: "1", step: "1", inputmode: "numeric", required: true, value: String(current ?? "") });
    const label = autoscale ? "Autoscale maximum (RU/s)" : "Manual throughput (RU/s)";
    return { input, autoscale, current, field: field(label, input) };
  }

  /** noOwnThroughput says where a container without an offer gets its
   * throughput: the database's, where the database has an offer. */
  noOwnThroughput() {
    if (!this.shared) return "This container has no throughput of its own.";
    return `This container has no throughput of its own: it shares its database's (${describeOffer(this.shared)}).`;
  }

  discard() {
    this.notice.clear();
    this.showSaved();
  }

  async save() {
    this.notice.clear();
    let defaultTtl;
    let indexingPolicy;
    let fullTextPolicy;
    try {
      defaultTtl = this.ttl.read();
      const parsed = parseObject(this.indexing.value, "indexing policy");
      if (parsed.error) throw new Error(parsed.error);
      indexingPolicy = parsed.value;
      fullTextPolicy = fullTextPolicyWith(this.page.container.fullTextPolicy, this.fullText.read().map((p) => p.path));
    } catch (e) {
      this.notice.error(e);
      return;
    }
    const done = [];
    try {
      if (this.containerChanged(defaultTtl, indexingPolicy, fullTextPolicy)) {
        const body = containerReplaceBody(this.page.container, { defaultTtl, indexingPolicy, fullTextPolicy });
        this.page.setContainer(await this.ctx.client.replaceContainer(this.page.db, this.page.coll, body, this.page.container._etag));
        this.ctx.catalog.invalidate(this.page.db);
        done.push("container settings");
      }
      if (this.throughputChanged()) {
        this.offer = await this.ctx.client.replaceOffer(this.offerWith(Number(this.throughput.input.value)));
        done.push("throughput");
      }
    } catch (e) {
      this.notice.error(e.status === 412 ? new Error("The container changed on the server since this page read it; discard and try again.") : e);
      return;
    }
    this.showSaved();
    this.notice.ok(done.length ? `Saved ${done.join(" and ")}.` : "Nothing to save: no setting changed.");
  }

  /** showSaved puts what the server now holds back into the form,
   * leaving the form (and keyboard focus) in place. */
  showSaved() {
    const container = this.page.container;
    this.ttl.set(container.defaultTtl);
    this.indexing.value = formatJSON(container.indexingPolicy ?? {});
    this.fullText.set(fullTextPathsOf(container));
    if (this.throughput) {
      const content = this.offer.content;
      this.throughput.current = this.throughput.autoscale ? content.offerAutopilotSettings.maxThroughput : content.offerThroughput;
      this.throughput.input.value = String(this.throughput.current ?? "");
    }
  }

  containerChanged(defaultTtl, indexingPolicy, fullTextPolicy) {
    const c = this.page.container;
    return (
      defaultTtl !== c.defaultTtl ||
      JSON.stringify(indexingPolicy) !== JSON.stringify(c.indexingPolicy ?? {}) ||
      JSON.stringify(fullTextPolicy) !== JSON.stringify(c.fullTextPolicy)
    );
  }

  throughputChanged() {
    return this.throughput !== null && Number(this.throughput.input.value) !== this.throughput.current;
  }

  /** offerWith is the whole offer with its throughput changed. */
  offerWith(ru) {
    const content = { ...this.offer.content };
    if (this.throughput.autoscale) {
      content.offerAutopilotSettings = { ...content.offerAutopilotSettings, maxThroughput: ru };
    } else {
      content.offerThroughput = ru;
    }
    return { ...this.offer, content };
  }
}
