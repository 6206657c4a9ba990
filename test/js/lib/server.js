// Starting and stopping an Ebb server for one test file.
//
// Each test file calls startEbb() in its `before` hook and stop() in its
// `after` hook. The server runs in memory (or on PostgreSQL: see
// storageArgs), over plain HTTP, on a manual clock (--clock-control), on
// a port the operating system picks on the loopback interface; the port
// is read from the banner Ebb prints. It
// runs with --check-on-exit: when stopped it checks that its documents,
// expiry keys, index entries and feed agree, and stop() fails (and with
// it the test file) when they do not.
//
// The binary comes from EBB_BIN (run.sh builds it once). Without EBB_BIN
// the helper builds one into a temporary directory for this process.

import { spawn, execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, access } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The Cosmos DB emulator's well-known master key, which Ebb uses by default. */
export const EMULATOR_KEY =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const START_DEADLINE_MS = 30_000;
const BUILD_DEADLINE_MS = 300_000;
const STOP_DEADLINE_MS = 15_000;

let builtBinary; // { path, dir } when this process built its own binary

async function ebbBinary() {
  if (process.env.EBB_BIN) {
    await access(process.env.EBB_BIN);
    return process.env.EBB_BIN;
  }
  if (!builtBinary) {
    const dir = await mkdtemp(join(tmpdir(), "ebb-js-e2e-"));
    const path = join(dir, "ebb");
    await execFileAsync("go", ["build", "-o", path, "./cmd/ebb"], {
      cwd: repoRoot,
      timeout: BUILD_DEADLINE_MS,
    });
    builtBinary = { path, dir };
    // The directory only holds the binary; remove it when this process ends.
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return builtBinary.path;
}

/**
 * Starts Ebb and waits until it answers.
 * @returns {Promise<{endpoint: string, key: string, logs: () => string, stop: () => Promise<void>}>}
 */
export async function startEbb({ extraArgs = [] } = {}) {
  const bin = await ebbBinary();
  const storage = await storageArgs();
  const args = [
    ...storage.args,
    "--no-tls",
    "--clock-control",
    "--listen",
    "127.0.0.1:0",
    "--log-level",
    "warn",
    "--check-on-exit",
    ...extraArgs,
  ];
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  let stdout = "";
  let stderr = "";
  const keepTail = (s) => (s.length > 64_000 ? s.slice(-64_000) : s);
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => (stderr = keepTail(stderr + d)));
  child.stdout.setEncoding("utf8");

  const exited = new Promise((resolveExit) => child.once("exit", (code, signal) => resolveExit({ code, signal })));

  const port = await new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`ebb did not print its banner within ${START_DEADLINE_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, START_DEADLINE_MS);
    child.stdout.on("data", (d) => {
      stdout = keepTail(stdout + d);
      const m = /serving the Cosmos DB NoSQL API at https?:\/\/[^/\s]*:(\d+)\//.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolvePort(Number(m[1]));
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`ebb exited before serving (code ${code}, signal ${signal})\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });

  const endpoint = `http://127.0.0.1:${port}/`;
  await waitReady(endpoint, exited);

  let stopped = false;
  return {
    endpoint,
    key: EMULATOR_KEY,
    logs: () => stderr,
    /** stop ends the server. It fails unless the server exits with status 0: with --check-on-exit, its consistency check passed. */
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`ebb had exited before stop (code ${child.exitCode}, signal ${child.signalCode})\nstderr: ${stderr}`);
      }
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_DEADLINE_MS);
      const { code, signal } = await exited;
      clearTimeout(timer);
      if (code !== 0) {
        throw new Error(`ebb did not stop cleanly (code ${code}, signal ${signal}): its consistency check failed or it hung\nstderr: ${stderr}`);
      }
      await storage.drop();
    },
  };
}

// storageArgs chooses where a server keeps its data: in memory, or, when
// EBB_JS_STORE holds a postgres:// URL (scripts/test runs the suite once
// so, on EBB_TEST_POSTGRES_URL), in a fresh schema of that database,
// created with psql and dropped when the server stops.
async function storageArgs() {
  const base = process.env.EBB_JS_STORE;
  if (!base) return { args: ["--memory"], drop: async () => {} };
  const schema = `ebbjs_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e9)}`;
  await execFileAsync("psql", [base, "-q", "-v", "ON_ERROR_STOP=1", "-c", `CREATE SCHEMA ${schema}`]);
  const url = new URL(base);
  url.searchParams.set("search_path", schema);
  return {
    args: ["--store", url.toString()],
    drop: () => execFileAsync("psql", [base, "-q", "-c", `DROP SCHEMA ${schema} CASCADE`]),
  };
}

// waitReady polls GET /_ebb/health/ready until it answers 200 (the
// server reached its store), the process exits, or the start deadline
// passes.
async function waitReady(endpoint, exited) {
  let dead = false;
  exited.then(() => (dead = true));
  const deadline = Date.now() + START_DEADLINE_MS;
  let lastError;
  while (Date.now() < deadline && !dead) {
    try {
      const res = await fetch(new URL("_ebb/health/ready", endpoint), { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.ok) return;
      lastError = new Error(`readiness answered ${res.status}`);
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`ebb at ${endpoint} did not become ready: ${dead ? "process exited" : lastError}`);
}
