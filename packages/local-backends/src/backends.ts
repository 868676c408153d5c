import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { mongoAnswers, natsAnswers, waitUntil } from "./probe";
import { type Backend, externalBackend, startProcess } from "./process";
import { findRepoRoot } from "./root";

export interface BackendOptions {
  url: string;
  /** Where started backends keep data and logs (the repo's `.data/`). */
  dataDir: string;
  /** Where infra/local/setup.sh puts the binaries it builds; defaults to the repo's `.data/tools`. */
  toolsDir?: string;
}

const onPath = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

const hostAndPort = (url: string, defaultPort: number) => {
  const parsed = new URL(url);
  return { host: parsed.hostname || "127.0.0.1", port: Number(parsed.port || defaultPort) };
};

/** NATS with JetStream: the one at `url` when it answers, else `nats-server -js` started here. */
export async function ensureNats({ url, dataDir }: BackendOptions): Promise<Backend> {
  if (await natsAnswers(url)) return externalBackend(url, "nats-server");
  if (!onPath("nats-server")) {
    throw new Error(
      `NATS does not answer at ${url} and nats-server is not installed (run: bash infra/local/setup.sh)`,
    );
  }
  const { host, port } = hostAndPort(url, 4222);
  const storeDir = join(dataDir, "nats");
  mkdirSync(storeDir, { recursive: true });
  const started = startProcess(
    "nats-server",
    "nats-server",
    ["-js", "-a", host, "-p", String(port), "-sd", storeDir],
    join(dataDir, "logs"),
  );
  await waitUntil(() => natsAnswers(url), 15_000, `nats-server on ${host}:${port}`);
  return { url, origin: "started", engine: "nats-server", stop: started.stop };
}

/**
 * A MongoDB-wire server: the one at `url` when it answers, else one started here (see `startMongo`).
 */
export async function ensureMongo(options: BackendOptions): Promise<Backend> {
  if (await mongoAnswers(options.url)) return externalBackend(options.url, "mongodb");
  return startMongo(options);
}

/**
 * Starts a MongoDB-wire server for `url`'s host and port with its data under `dataDir`: `mongod`
 * when installed, else FerretDB v1 with its SQLite backend (built by infra/local/setup.sh).
 */
export async function startMongo({ url, dataDir, toolsDir }: BackendOptions): Promise<Backend> {
  const { host, port } = hostAndPort(url, 27017);
  const logDir = join(dataDir, "logs");
  let started: ReturnType<typeof startProcess>;
  let engine: string;
  if (onPath("mongod")) {
    const dbPath = join(dataDir, "mongod");
    mkdirSync(dbPath, { recursive: true });
    engine = "mongod";
    started = startProcess(
      "mongod",
      "mongod",
      ["--dbpath", dbPath, "--bind_ip", host, "--port", String(port)],
      logDir,
    );
  } else {
    const binary = join(toolsDir ?? join(findRepoRoot(), ".data", "tools"), "ferretdb");
    if (!existsSync(binary)) {
      throw new Error(
        `MongoDB does not answer at ${url} and FerretDB is not built (run: bash infra/local/setup.sh)`,
      );
    }
    const stateDir = join(dataDir, "ferretdb");
    mkdirSync(stateDir, { recursive: true });
    engine = "ferretdb (sqlite)";
    started = startProcess(
      "ferretdb",
      binary,
      [
        "--handler=sqlite",
        `--sqlite-url=file:${stateDir}/`,
        `--state-dir=${stateDir}`,
        `--listen-addr=${host}:${port}`,
        "--debug-addr=-",
        "--telemetry=disable",
        "--log-level=warn",
      ],
      logDir,
    );
  }
  await waitUntil(() => mongoAnswers(url), 30_000, `${engine} on ${host}:${port}`);
  return { url, origin: "started", engine, stop: started.stop };
}
