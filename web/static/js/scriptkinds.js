// Server-side scripts as the page handles them: the three kinds a
// container holds (stored procedures, triggers, user-defined functions),
// a starting body for a new one, the resource body a save sends, the
// arguments typed to run a stored procedure, and where the server says a
// script does not compile.

/**
 * The kinds of script, in the order the Scripts tab lists them. kind is
 * the path segment under a container (dbs/{db}/colls/{coll}/{kind}).
 * Each template is one function expression: the server compiles a body
 * as such, so a script is a function and nothing else.
 */
export const SCRIPT_KINDS = [
  {
    kind: "sprocs",
    title: "Stored procedures",
    noun: "stored procedure",
    template: `function hello(name) {
  var response = getContext().getResponse();
  console.log("greeting " + name);
  response.setBody({ greeting: "Hello, " + name });
}
`,
  },
  {
    kind: "triggers",
    title: "Triggers",
    noun: "trigger",
    template: `function stampCreated() {
  var request = getContext().getRequest();
  var item = request.getBody();
  item.createdAt = new Date().toISOString();
  request.setBody(item);
}
`,
  },
  {
    kind: "udfs",
    title: "User-defined functions",
    noun: "user-defined function",
    template: `function withTax(price) {
  return price * 1.2;
}
`,
  },
];

/** scriptKind looks a kind up by its path segment. */
export function scriptKind(kind) {
  const found = SCRIPT_KINDS.find((k) => k.kind === kind);
  if (!found) throw new Error(`unknown kind of script: ${kind}`);
  return found;
}

/** When a trigger runs: before or after the operation. */
export const TRIGGER_TYPES = ["Pre", "Post"];

/** The operations a trigger can be named on. */
export const TRIGGER_OPERATIONS = ["All", "Create", "Replace", "Delete", "Upsert"];

/**
 * triggerChoice is what a trigger's select offers and shows: choices,
 * and value, the one current stands for. Case is ignored, since the
 * SDKs write the same type differently ("Pre" from .NET, "pre" from
 * JavaScript); a value the page does not know is kept as a further
 * choice rather than changed behind the user's back; none is the first.
 */
export function triggerChoice(choices, current) {
  if (current === undefined || current === null || current === "") return { choices, value: choices[0] };
  const known = choices.find((c) => c.toLowerCase() === String(current).toLowerCase());
  return known ? { choices, value: known } : { choices: [...choices, String(current)], value: String(current) };
}

/**
 * scriptResource is the body a create or replace sends: the id and the
 * JavaScript, and for a trigger its type and operation.
 */
export function scriptResource(kind, { id, body, triggerType, triggerOperation }) {
  const resource = { id, body };
  if (kind === "triggers") {
    resource.triggerType = triggerType;
    resource.triggerOperation = triggerOperation;
  }
  return resource;
}

/**
 * parseArguments reads a stored procedure's arguments: a JSON array
 * (empty text counts as no arguments). It returns {value} or {error}
 * with a message for the user, so nothing is sent that the server would
 * refuse.
 */
export function parseArguments(text) {
  if (text.trim() === "") return { value: [] };
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `The arguments are not valid JSON: ${e.message}` };
  }
  if (!Array.isArray(value)) {
    return { error: 'The arguments must be a JSON array, one element per parameter: for example ["a", 1]. Write [] for none.' };
  }
  return { value };
}

/**
 * compileErrorPosition finds where a script that does not compile went
 * wrong, from the server's message ("… (line 2, column 11)"); null when
 * the message names no place.
 */
export function compileErrorPosition(message) {
  const m = /\(line (\d+), column (\d+)\)\s*$/.exec(String(message ?? ""));
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

/**
 * offsetAt turns a 1-based line and column into an offset in text,
 * clamped to the text, for placing the cursor where an error is.
 */
export function offsetAt(text, line, column) {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf("\n", offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  const end = text.indexOf("\n", offset);
  const lineEnd = end < 0 ? text.length : end;
  return Math.min(offset + Math.max(column - 1, 0), lineEnd);
}
