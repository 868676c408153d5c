import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Backend, ensureMongo, findRepoRoot, freePort, startMongo } from "@agentnet/local-backends";
import type { TestProject } from "vitest/node";
import { dockerAnswers, startContainerMongo } from "./containers";
import "./provided";

/**
 * Makes sure the MongoDB-wire server tests talk to answers, once per test run: `MONGO_URL` when set
 * (with a login in it when the server requires one); else a container when a Docker engine answers;
 * else a server of this run's own (FerretDB or mongod, requiring the login its URL carries). NATS is
 * not shared: each test file starts its own authenticated nats-server (`isolatedNats`). A missing
 * backend fails the run loudly; no test is skipped for lack of one.
 */
export default async function setup(project: TestProject) {
  const env = process.env;
  const started: Backend[] = [];
  let mongoUrl = env.MONGO_URL;
  if (!mongoUrl && (await dockerAnswers())) {
    const container = await startContainerMongo();
    mongoUrl = container.mongoUrl;
    started.push(container.backend);
  }
  // Without MONGO_URL the run gets a server of its own, on a free port with a throwaway data dir:
  // a server another run started (and will stop) must never be what this run depends on.
  const privateDir = mongoUrl ? undefined : mkdtempSync(join(tmpdir(), "agn-test-mongo-"));
  const mongo = privateDir
    ? await startMongo({ url: `mongodb://127.0.0.1:${await freePort()}/agentnet_test`, dataDir: privateDir })
    : await ensureMongo({
        url: mongoUrl ?? "",
        dataDir: join(findRepoRoot(), ".data", "test"),
        // The operator named this server (or it is this run's container): tests use it even
        // without a login. A server this run starts requires one, and its URL carries it.
        reuseUnauthenticated: true,
      });
  started.push(mongo);
  const runDir = mkdtempSync(join(tmpdir(), "agn-test-run-"));
  project.provide("runDir", runDir);
  project.provide("mongoUrl", withDatabase(mongo.url, "agentnet_test"));
  return async () => {
    stopFileServers(runDir);
    for (const backend of started.reverse()) await backend.stop();
    if (privateDir) rmSync(privateDir, { recursive: true, force: true });
  };
}

/** Tests share one database; isolation comes from fresh random account ids, not truncation. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  if (parsed.pathname === "" || parsed.pathname === "/") parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Stops every per-file nats-server of the run, including those whose worker died without cleaning up. */
function stopFileServers(runDir: string) {
  for (const entry of readdirSync(runDir)) {
    const pidFile = join(runDir, entry, "pid");
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : 0;
    if (pid > 0) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone: its worker stopped it.
      }
    }
  }
  rmSync(runDir, { recursive: true, force: true });
}
