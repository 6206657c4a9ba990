// Starting and stopping an ebb process for a test: in memory, plain
// HTTP, manual clock, on a free loopback port. The binary comes from
// EBB_BIN (run.sh builds it).

import { spawn } from "node:child_process";
import { createServer } from "node:net";

/** EMULATOR_KEY is the Cosmos DB emulator's well-known key, Ebb's default. */
export const EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

const START_DEADLINE_MS = 30_000;

/** freePort asks the kernel for a port nothing listens on. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * startEbb runs `ebb --memory --no-tls --clock-control` and waits until it
 * is healthy. It returns {endpoint, logs(), stop()}.
 */
export async function startEbb() {
  const bin = process.env.EBB_BIN;
  if (!bin) throw new Error("EBB_BIN is not set: run the browser tests with test/browser/run.sh");
  const port = await freePort();
  const child = spawn(bin, ["--memory", "--no-tls", "--clock-control", "--listen", `127.0.0.1:${port}`, "--log-level", "warn"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-32_000);
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const endpoint = `http://127.0.0.1:${port}/`;
  await waitHealthy(endpoint, child, () => stderr);
  return {
    endpoint,
    logs: () => stderr,
    async stop() {
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitHealthy(endpoint, child, logs) {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`ebb exited with code ${child.exitCode}:\n${logs()}`);
    try {
      const res = await fetch(new URL("_ebb/health", endpoint), { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`ebb at ${endpoint} did not become healthy within ${START_DEADLINE_MS} ms:\n${logs()}`);
}
