import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type BusCredentials, natsServerConfig, type OperatorUser, writeNatsServerConfig } from "./nats-auth";
import { freePort } from "./ports";
import { mongoAnswers, natsAnswers, probeNats, waitUntil } from "./probe";
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

export interface NatsOptions extends BackendOptions {
  /** The services' passwords: the server started here admits each service as itself, and nobody else. */
  credentials: BusCredentials;
  /** Users with every permission (tests, benchmarks); none in a stack started by `agentnet up`. */
  operators?: OperatorUser[];
  /** Use a server at `url` that admits anyone: only when the operator says so explicitly. */
  reuseUnauthenticated?: boolean;
  /** Serve Go's pprof on this port (benchmarks profiling the server under load). */
  profPort?: number;
}

export interface NatsBackend extends Backend {
  /** Set when the stack did not get what `url` asked for, e.g. another server held the port. */
  note?: string;
}

/**
 * NATS with JetStream that requires credentials: the server at `url` when it admits this stack's
 * credentials (one an earlier `agentnet up` started), else `nats-server` started here with the
 * per-service users of `busPermissions`. A server that admits anyone is never used unless
 * `reuseUnauthenticated`; one that holds the port otherwise makes this start ours on a free port.
 */
export async function ensureNats(options: NatsOptions): Promise<NatsBackend> {
  const { url, credentials } = options;
  const anonymous = await probeNats(url);
  if (anonymous === "answers" && options.reuseUnauthenticated) {
    return { ...externalBackend(url, "nats-server"), note: "admits clients without credentials" };
  }
  if (
    anonymous === "refused" &&
    (await natsAnswers(url, { auth: { user: "cli", password: credentials.cli } }))
  ) {
    return externalBackend(url, "nats-server");
  }
  const { host, port } = hostAndPort(url, 4222);
  if (anonymous === "down") return startNats({ ...options, host, port });
  const own = await freePort();
  const started = await startNats({ ...options, host, port: own });
  const other = anonymous === "answers" ? "a NATS server that admits anyone" : "another NATS server";
  return { ...started, note: `port ${port} is held by ${other}; started ours on port ${own}` };
}

/** Starts `nats-server` on `host:port` with JetStream and this stack's users, its data under `dataDir`. */
export async function startNats(
  options: Omit<NatsOptions, "url" | "reuseUnauthenticated"> & { host: string; port: number },
): Promise<NatsBackend> {
  if (!onPath("nats-server")) {
    throw new Error("nats-server is not installed (run: bash infra/local/setup.sh)");
  }
  const { host, port, dataDir } = options;
  const storeDir = join(dataDir, "nats");
  mkdirSync(storeDir, { recursive: true, mode: 0o700 });
  const configFile = join(storeDir, "nats-server.conf");
  writeNatsServerConfig(
    configFile,
    natsServerConfig({
      host,
      port,
      storeDir,
      passwords: options.credentials,
      ...(options.operators ? { operators: options.operators } : {}),
      ...(options.profPort === undefined ? {} : { profPort: options.profPort }),
    }),
  );
  const started = startProcess("nats-server", "nats-server", ["-c", configFile], join(dataDir, "logs"));
  const url = `nats://${host}:${port}`;
  const auth = { user: "cli", password: options.credentials.cli };
  await waitUntil(() => natsAnswers(url, { auth }), 15_000, `nats-server on ${host}:${port}`);
  return { url, origin: "started", engine: "nats-server", pid: started.child.pid, stop: started.stop };
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
  return { url, origin: "started", engine, pid: started.child.pid, stop: started.stop };
}
