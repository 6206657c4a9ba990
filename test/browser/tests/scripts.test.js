// The Scripts tab in a real (headless) Chromium against a real ebb
// process: a stored procedure, a pre-trigger and a user-defined function
// written, saved, listed, edited and deleted from the page; a script
// that does not compile refused with the server's message, which names
// the line; and a stored procedure run with a partition key and
// arguments, showing what it returned, its charge and its log. What the
// page did is confirmed through the REST API itself. Screenshots go to
// test/browser/artifacts/.

import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { errorText, scriptLog } from "../../../web/static/js/api.js";
import { parseRoute, routeHref } from "../../../web/static/js/router.js";
import { TRIGGER_TYPES, compileErrorPosition, offsetAt, parseArguments, scriptResource, triggerChoice } from "../../../web/static/js/scriptkinds.js";
import { consumeLogged, openExplorer, until } from "../lib/explorer.js";

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const DB = "scripting";
const COLL = "orders";
const COLL_PATH = `/dbs/${DB}/colls/${COLL}`;

/** A procedure that writes an item in its partition, says so in its
 * log (with characters the log header has to encode) and answers with
 * what it wrote. */
const ADD_ITEM = `function addItem(id, note) {
  var context = getContext();
  var collection = context.getCollection();
  console.log("creating " + id + ": 100% sure ✓");
  var accepted = collection.createDocument(collection.getSelfLink(), { id: id, pk: "p", note: note }, function (err, item) {
    if (err) throw err;
    context.getResponse().setBody({ created: item.id, note: item.note });
  });
  if (!accepted) throw new Error("the write was not accepted");
}
`;

/** Not JavaScript: the mistake is on line 2. */
const BROKEN = `function broken() {
  var x = ;
  return x;
}
`;

const STAMP = `function stamp() {
  var request = getContext().getRequest();
  var item = request.getBody();
  item.stamped = true;
  request.setBody(item);
}
`;

describe("script helpers", () => {
  it("read a procedure's arguments: a JSON array, or nothing", () => {
    assert.deepEqual(parseArguments('["a", 1]'), { value: ["a", 1] });
    assert.deepEqual(parseArguments(" "), { value: [] });
    assert.match(parseArguments('{"a": 1}').error, /must be a JSON array/);
    assert.match(parseArguments('"a"').error, /must be a JSON array/);
    assert.match(parseArguments("[1,").error, /not valid JSON/);
  });

  it("find where the server says a script does not compile", () => {
    assert.deepEqual(compileErrorPosition("The stored procedure 'x' does not compile: Unexpected token ; (line 2, column 11)"), { line: 2, column: 11 });
    assert.equal(compileErrorPosition("Resource Not Found"), null);
    const text = "ab\ncdef\ng";
    assert.equal(offsetAt(text, 1, 1), 0);
    assert.equal(offsetAt(text, 2, 3), 5);
    assert.equal(offsetAt(text, 2, 99), 7, "a column past the end of its line stops there");
    assert.equal(offsetAt(text, 9, 1), text.length);
  });

  it("send a trigger's type and operation, matched in any case", () => {
    assert.deepEqual(scriptResource("udfs", { id: "f", body: "function () {}", triggerType: "Pre" }), { id: "f", body: "function () {}" });
    assert.deepEqual(scriptResource("triggers", { id: "t", body: "b", triggerType: "Pre", triggerOperation: "All" }), { id: "t", body: "b", triggerType: "Pre", triggerOperation: "All" });
    assert.deepEqual(triggerChoice(TRIGGER_TYPES, "post"), { choices: TRIGGER_TYPES, value: "Post" });
    assert.deepEqual(triggerChoice(TRIGGER_TYPES, undefined), { choices: TRIGGER_TYPES, value: "Pre" });
    assert.deepEqual(triggerChoice(["All"], "Update"), { choices: ["All", "Update"], value: "Update" }, "an unknown value is kept");
  });

  it("decode the script log header and route to the tab", () => {
    assert.equal(scriptLog("a%20b%3A%20100%25%20%E2%9C%93"), "a b: 100% ✓");
    assert.equal(scriptLog("100%"), "100%", "not percent-encoding: shown as it came");
    assert.equal(scriptLog(null), "");
    const route = { page: "container", db: "d", coll: "c", tab: "scripts" };
    assert.deepEqual(parseRoute(routeHref(route)), route);
  });
});

describe("Scripts tab", () => {
  let x;
  let page;
  const tab = (name) => page.getByRole("navigation", { name: "Container views" }).getByRole("link", { name, exact: true });
  const status = (text) => page.getByRole("status").filter({ hasText: text });
  const section = (name) => page.getByRole("region", { name, exact: true });
  const listed = (name) => section(name).locator("tbody tr[data-id]").evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.innerText.trim())));
  const editor = (name) => page.getByRole("form", { name, exact: true });
  const runForm = () => page.getByRole("form", { name: "Run addItem" });
  const shot = async (name) => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };
  const readScript = (kind, id) => x.rest("GET", `${COLL_PATH}/${kind}/${id}`);

  before(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    x = await openExplorer();
    page = x.page;
    assert.equal((await x.rest("POST", "/dbs", { body: { id: DB } })).status, 201);
    assert.equal((await x.rest("POST", `/dbs/${DB}/colls`, { body: { id: COLL, partitionKey: { paths: ["/pk"], kind: "Hash" } } })).status, 201);
  });
  after(() => x?.close());

  it("lists each kind of script, empty at first, each with a New action", async () => {
    await page.evaluate((hash) => (location.hash = hash), routeHref({ page: "container", db: DB, coll: COLL, tab: "items" }));
    await page.getByRole("heading", { level: 1, name: COLL }).waitFor();
    await tab("Scripts").click();
    for (const [title, noun] of [
      ["Stored procedures", "stored procedure"],
      ["Triggers", "trigger"],
      ["User-defined functions", "user-defined function"],
    ]) {
      await section(title).getByText(`No ${title.toLowerCase()} yet.`).waitFor();
      await section(title).getByRole("button", { name: `New ${noun}` }).waitFor();
    }
    assert.equal(await tab("Scripts").getAttribute("aria-current"), "page");
    await shot("scripts-empty");
  });

  it("refuses a stored procedure that does not compile with the server's message, which names the line", async () => {
    await page.getByRole("button", { name: "New stored procedure" }).click();
    const form = editor("New stored procedure");
    assert.ok(await form.getByLabel("Stored procedure id").evaluate((el) => el === document.activeElement), "the new script's id has the focus");
    await form.getByLabel("Stored procedure id").fill("broken");
    await form.getByLabel("Body (JavaScript)").fill(BROKEN);
    await form.getByRole("button", { name: "Create stored procedure" }).click();
    const alert = form.getByRole("alert");
    await alert.waitFor();
    consumeLogged(x.browser.problems, 400, /\/sprocs$/);

    const shown = (await alert.innerText()).trim();
    assert.match(shown, /^The stored procedure 'broken' does not compile: .+ \(line 2, column \d+\)$/);
    const direct = await x.rest("POST", `${COLL_PATH}/sprocs`, { body: { id: "broken", body: BROKEN } });
    assert.equal(direct.status, 400);
    assert.equal(shown, errorText(direct.body.message), "the server's own message");
    assert.equal((await readScript("sprocs", "broken")).status, 404, "nothing was saved");

    // The cursor is put on the line the server names.
    const body = form.getByLabel("Body (JavaScript)");
    assert.equal(await body.getAttribute("aria-invalid"), "true");
    const line = await body.evaluate((el) => (el === document.activeElement ? el.value.slice(0, el.selectionStart).split("\n").length : 0));
    assert.equal(line, 2, "the cursor is on line 2");
    await shot("scripts-compile-error");
  });

  it("creates a stored procedure and lists it", async () => {
    const form = editor("New stored procedure");
    await form.getByLabel("Stored procedure id").fill("addItem");
    await form.getByLabel("Body (JavaScript)").fill(ADD_ITEM);
    await form.getByRole("button", { name: "Create stored procedure" }).click();
    await status("Created stored procedure addItem.").waitFor();
    assert.deepEqual(await listed("Stored procedures"), [["addItem"]]);
    const saved = await readScript("sprocs", "addItem");
    assert.equal(saved.status, 200);
    assert.equal(saved.body.body, ADD_ITEM);
    // The saved procedure stays open, with its run form.
    await editor("Stored procedure addItem").waitFor();
    await runForm().waitFor();
  });

  it("checks the arguments are a JSON array before sending anything", async () => {
    const sent = [];
    const onRequest = (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === `${COLL_PATH}/sprocs/addItem`) sent.push(r);
    };
    page.on("request", onRequest);
    await runForm().getByLabel("Value of /pk").fill("p");
    const args = runForm().getByLabel("Arguments (JSON array)");
    for (const [text, message] of [
      ['{"id": "x"}', /^The arguments must be a JSON array/],
      ['["x",', /^The arguments are not valid JSON: /],
    ]) {
      await args.fill(text);
      await runForm().getByRole("button", { name: "Run", exact: true }).click();
      assert.match(await runForm().getByRole("alert").innerText(), message);
      assert.equal(await args.getAttribute("aria-invalid"), "true");
      assert.ok(await args.evaluate((el) => el === document.activeElement), "the arguments have the focus");
    }
    page.off("request", onRequest);
    assert.equal(sent.length, 0, "no request was sent");
  });

  it("runs it in a partition with arguments and shows the result, the charge and the log", async () => {
    await runForm().getByLabel("Value of /pk").fill('"p"');
    await runForm().getByLabel("Arguments (JSON array)").fill('["from-page", "hello"]');
    const request = page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === `${COLL_PATH}/sprocs/addItem`);
    await runForm().getByRole("button", { name: "Run", exact: true }).click();
    const headers = (await request).headers();
    assert.equal(headers["x-ms-documentdb-partitionkey"], '["p"]');
    assert.equal(headers["x-ms-documentdb-script-enable-logging"], "true");

    const result = runForm().getByLabel("Result as JSON");
    await result.waitFor();
    assert.deepEqual(JSON.parse(await result.innerText()), { created: "from-page", note: "hello" });
    assert.match(await runForm().locator(".stats").innerText(), /Request charge\s+\d+\.\d\d RU/i);
    assert.equal((await runForm().getByLabel("Script log").innerText()).trim(), "creating from-page: 100% sure ✓");
    assert.equal(await runForm().getByRole("alert").count(), 0, "the earlier complaint is gone");

    const item = await x.rest("GET", `${COLL_PATH}/docs/from-page`, { headers: { "x-ms-documentdb-partitionkey": '["p"]' } });
    assert.equal(item.status, 200, JSON.stringify(item.body));
    assert.equal(item.body.note, "hello");
    await shot("scripts-run");
  });

  it("shows the server's message when a run fails, and no result under it", async () => {
    // The item exists now, so the procedure's create fails and it throws.
    await runForm().getByRole("button", { name: "Run", exact: true }).click();
    const alert = runForm().getByRole("alert");
    await alert.waitFor();
    const direct = await x.rest("POST", `${COLL_PATH}/sprocs/addItem`, { body: ["from-page", "hello"], headers: { "x-ms-documentdb-partitionkey": '["p"]' } });
    assert.ok(direct.status >= 400, `the direct run failed too: ${direct.status}`);
    consumeLogged(x.browser.problems, direct.status, /\/sprocs\/addItem$/);
    const words = (s) => s.replace(/\s+/g, " ").trim();
    assert.match(words(await alert.innerText()), /^Encountered exception while executing function\. Exception = /);
    assert.equal(words(await alert.innerText()), words(errorText(direct.body.message)));
    assert.equal(await runForm().getByLabel("Result as JSON").count(), 0);
  });

  it("creates a pre-trigger and a user-defined function and lists them", async () => {
    await page.getByRole("button", { name: "New trigger" }).click();
    const trigger = editor("New trigger");
    await trigger.getByLabel("Trigger id").fill("stamp");
    await trigger.getByLabel("Trigger type").selectOption("Pre");
    await trigger.getByLabel("Trigger operation").selectOption("Create");
    await trigger.getByLabel("Body (JavaScript)").fill(STAMP);
    await trigger.getByRole("button", { name: "Create trigger" }).click();
    await status("Created trigger stamp.").waitFor();
    assert.deepEqual(await listed("Triggers"), [["stamp", "Pre", "Create"]]);
    const saved = (await readScript("triggers", "stamp")).body;
    assert.deepEqual([saved.triggerType, saved.triggerOperation, saved.body], ["Pre", "Create", STAMP]);
    await shot("scripts-trigger");

    // A new function starts from a template that compiles.
    await page.getByRole("button", { name: "New user-defined function" }).click();
    const udf = editor("New user-defined function");
    await udf.getByLabel("User-defined function id").fill("withTax");
    await udf.getByRole("button", { name: "Create user-defined function" }).click();
    await status("Created user-defined function withTax.").waitFor();
    assert.deepEqual(await listed("User-defined functions"), [["withTax"]]);
    assert.equal((await readScript("udfs", "withTax")).status, 200);
    assert.deepEqual(await listed("Stored procedures"), [["addItem"]], "the other lists stay");
  });

  it("edits a trigger: the replace reaches the server and the list", async () => {
    await section("Triggers").getByRole("button", { name: "stamp", exact: true }).click();
    const form = editor("Trigger stamp");
    assert.equal(await form.getByLabel("Trigger id").getAttribute("readonly"), "", "a saved script keeps its id");
    assert.equal(await form.getByLabel("Trigger operation").inputValue(), "Create");
    assert.equal(await section("Triggers").getByRole("button", { name: "stamp", exact: true }).getAttribute("aria-current"), "true");
    await form.getByLabel("Trigger operation").selectOption("Upsert");
    await form.getByLabel("Body (JavaScript)").fill(STAMP.replace("true", '"yes"'));
    await form.getByRole("button", { name: "Save", exact: true }).click();
    await status("Saved trigger stamp.").waitFor();
    await until("the list shows Upsert", async () => JSON.stringify(await listed("Triggers")) === '[["stamp","Pre","Upsert"]]');
    const saved = (await readScript("triggers", "stamp")).body;
    assert.equal(saved.triggerOperation, "Upsert");
    assert.match(saved.body, /item\.stamped = "yes";/);

    // Close gives the focus back to the script's row.
    await editor("Trigger stamp").getByRole("button", { name: "Close" }).click();
    assert.ok(await section("Triggers").getByRole("button", { name: "stamp", exact: true }).evaluate((el) => el === document.activeElement));
  });

  it("deletes a script after a confirmation", async () => {
    await section("User-defined functions").getByRole("button", { name: "withTax", exact: true }).click();
    const form = editor("User-defined function withTax");
    const confirm = page.getByRole("dialog");

    await form.getByRole("button", { name: "Delete", exact: true }).click();
    assert.equal(await confirm.locator("[data-question]").innerText(), 'Delete user-defined function "withTax"? This cannot be undone.');
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "hidden" });
    assert.equal((await readScript("udfs", "withTax")).status, 200, "a cancelled delete deletes nothing");

    await form.getByRole("button", { name: "Delete", exact: true }).click();
    await confirm.getByRole("button", { name: "Delete user-defined function" }).click();
    await status("Deleted user-defined function withTax.").waitFor();
    await section("User-defined functions").getByText("No user-defined functions yet.").waitFor();
    assert.equal((await readScript("udfs", "withTax")).status, 404);
    assert.equal(await form.count(), 0, "the editor is closed");
    assert.ok(await page.getByRole("button", { name: "New user-defined function" }).evaluate((el) => el === document.activeElement), "focus goes to the list's New");
  });

  it("stays usable on a narrow window", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await section("Stored procedures").getByRole("button", { name: "addItem", exact: true }).click();
    await runForm().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await shot("scripts-narrow");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("logged no console errors", () => {
    assert.deepEqual(x.browser.problems, []);
  });
});
