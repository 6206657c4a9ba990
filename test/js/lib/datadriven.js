// Reading a data file in the format of github.com/cockroachdb/datadriven,
// which the Go tests run with that package: a directive line, optional
// input lines, "----", the expected output up to a blank line (or, after
// a second "----", up to a closing "----" "----" pair). Lines starting
// with "#" between directives are comments; a directive line ending in
// "\" continues on the next.

import { readFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * parseLine splits a directive line into its command and arguments, as
 * datadriven.ParseLine does: `cmd key key=value key=(v1, v2)`. Values
 * in parentheses may nest parentheses. Returns {cmd, args} where args
 * maps each key to its list of values ([] for a bare key).
 */
export function parseLine(line) {
  let rest = line.trim();
  const fail = () => {
    throw new Error(`cannot parse directive at column ${line.trim().length - rest.length + 1}: ${line.trim()}`);
  };
  const until = (chars) => {
    let i = 0;
    while (i < rest.length && !chars.includes(rest[i])) i++;
    const head = rest.slice(0, i);
    rest = rest.slice(i);
    return head;
  };
  const cmd = until(" ");
  if (cmd === "") fail();
  rest = rest.trim();
  const args = new Map();
  while (rest !== "") {
    const key = until(" =");
    if (key === "") fail();
    let vals = [];
    if (rest.startsWith("=")) {
      rest = rest.slice(1);
      if (rest === "" || rest[0] === " ") {
        vals = [""];
      } else if (rest[0] !== "(") {
        vals = [until(" ")];
      } else {
        let pos = 1;
        let depth = 1;
        let start = 1;
        while (depth > 0) {
          if (pos === rest.length) fail();
          const c = rest[pos++];
          if (c === "," && depth === 1) {
            vals.push(rest.slice(start, pos - 1));
            while (rest[pos] === " ") pos++;
            start = pos;
          } else if (c === "(") {
            depth++;
          } else if (c === ")") {
            depth--;
          }
        }
        vals.push(rest.slice(start, pos - 1));
        rest = rest.slice(pos);
      }
    }
    args.set(key, vals);
    rest = rest.trim();
  }
  return { cmd, args };
}

/**
 * readDataFile parses a datadriven file into its directives:
 * {pos: "file:line", line, cmd, args, input, expected}, with input and
 * expected as text without a final newline.
 */
export function readDataFile(path) {
  const lines = readFileSync(path, "utf8").split("\n");
  const name = basename(path);
  const out = [];
  let i = 0;
  while (i < lines.length) {
    let line = lines[i].trim();
    const at = i + 1;
    i++;
    if (line === "" || line.startsWith("#")) continue;
    while (line.endsWith("\\") && i < lines.length) {
      line = `${line.slice(0, -1)} ${lines[i++].trim()}`;
    }
    const { cmd, args } = parseLine(line);
    const input = [];
    while (i < lines.length && lines[i] !== "----") input.push(lines[i++]);
    const expected = [];
    if (i < lines.length) {
      i++; // the separator
      if (lines[i] === "----") {
        i++;
        while (i < lines.length && !(lines[i] === "----" && lines[i + 1] === "----")) expected.push(lines[i++]);
        i += 3; // the closing pair and the blank line after it
      } else {
        while (i < lines.length && lines[i].trim() !== "") expected.push(lines[i++]);
      }
    }
    out.push({ pos: `${name}:${at}`, line, cmd, args, input: input.join("\n").trim(), expected: expected.join("\n") });
  }
  return out;
}
