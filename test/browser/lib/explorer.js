// A connected Ebb Explorer for one test file: an ebb process, a headless
// Chromium, and the page connected with the emulator key. Also the small
// waiting and console-checking helpers the tests share.

import assert from "node:assert/strict";

import { launchBrowser } from "./browser.js";
import { EMULATOR_KEY, startEbb } from "./ebb.js";
import { cosmosFetch } from "./rest.js";

/**
 * openExplorer starts ebb and a browser, and connects the page. It
 * returns {ebb, browser, page, rest, close}; rest(verb, path, options)
 * is a signed fetch to the same server.
 */
export async function openExplorer() {
  const ebb = await startEbb();
  let browser;
  try {
    browser = await launchBrowser();
    const page = browser.page;
    page.setDefaultTimeout(10_000);
    await page.goto(new URL("_explorer/", ebb.endpoint).href);
    await page.getByLabel("Account key or connection string").fill(EMULATOR_KEY);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Databases" }).waitFor();
    return {
      ebb,
      browser,
      page,
      rest: (verb, path, options) => cosmosFetch(ebb.endpoint, EMULATOR_KEY, verb, path, options),
      async close() {
        await browser.close();
        await ebb.stop();
      },
    };
  } catch (e) {
    await browser?.close();
    await ebb.stop();
    throw e;
  }
}

/** until polls check until it returns a truthy value (or fails after 10 s). */
export async function until(what, check) {
  const deadline = Date.now() + 10_000;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/**
 * consumeLogged removes from problems the console errors a step caused on
 * purpose (Chromium logs every failed fetch, such as a 400 the page then
 * shows to the user) and asserts there was exactly one.
 */
export function consumeLogged(problems, status, urlPattern) {
  const prefix = `Failed to load resource: the server responded with a status of ${status}`;
  const matching = problems.filter((p) => p.text.startsWith(prefix) && urlPattern.test(p.url));
  assert.equal(matching.length, 1, `expected one logged ${status} for ${urlPattern}, got ${JSON.stringify(problems)}`);
  problems.splice(problems.indexOf(matching[0]), 1);
}
