// Launching Debian's Chromium through playwright-core (no browser
// download) with a fresh profile, and collecting what the page logs.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-quic",
  "--no-first-run",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * launchBrowser opens a headless Chromium with a 1280×800 window. It
 * returns {page, problems, close}: problems collects console errors and
 * uncaught page exceptions as strings, each with its source URL.
 */
export async function launchBrowser() {
  const profile = await mkdtemp(join(tmpdir(), "ebb-browser-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
    locale: "en-US",
    timezoneId: "UTC",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push({ text: msg.text(), url: msg.location()?.url ?? "" });
  });
  page.on("pageerror", (err) => problems.push({ text: `uncaught: ${err.message}`, url: "" }));
  return {
    page,
    problems,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
