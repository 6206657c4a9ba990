// The Time-To-Live contract's data file, testdata/ttl/matrix (its header
// describes it), and helpers to read its rows. Only node's own modules,
// so the browser suite reads it too.

import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { readDataFile } from "./datadriven.js";

/** MATRIX is the data file's path. */
export const MATRIX = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "testdata", "ttl", "matrix");

/** readMatrix returns the data file's directives (see readDataFile). */
export function readMatrix() {
  return readDataFile(MATRIX);
}

/**
 * argValue returns the JSON value of a directive's argument, or
 * undefined when the directive leaves it out (a property left out).
 */
export function argValue(d, key) {
  const vals = d.args.get(key);
  if (vals === undefined) return undefined;
  assert.equal(vals.length, 1, `${d.pos}: ${key} takes one value`);
  return JSON.parse(vals[0]);
}

/** setting names a defaultTtl as the portal does. */
export function setting(defaultTtl) {
  if (defaultTtl === undefined || defaultTtl === null) return "Off";
  if (defaultTtl === -1) return "On (no default)";
  return `On ${defaultTtl} s`;
}

/**
 * expiryRows returns the file's expiry directives as {d, defaultTtl,
 * ttl, probes, expiresAfter}: probes is [{at, visible}] from the
 * expected output, expiresAfter the seconds after _ts at which the item
 * is first gone (null: never, as far as the probes go).
 */
export function expiryRows() {
  return readMatrix()
    .filter((d) => d.cmd === "expiry")
    .map((d) => {
      const probes = d.expected.split("\n").map((line) => {
        const m = /^_ts\+(\d+) (visible|gone)$/.exec(line);
        assert.ok(m, `${d.pos}: expiry output ${JSON.stringify(line)}`);
        return { at: Number(m[1]), visible: m[2] === "visible" };
      });
      const gone = probes.filter((p) => !p.visible).map((p) => p.at);
      const expiresAfter = gone.length ? Math.min(...gone) : null;
      return { d, defaultTtl: argValue(d, "defaultTtl"), ttl: argValue(d, "ttl"), probes, expiresAfter };
    });
}
