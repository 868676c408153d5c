import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import mongoose from "mongoose";
import {
  carriesMongoCredentials,
  localMongoCredentials,
  type MongoCredentials,
  mongoCredentialsFile,
  redactMongoUrl,
  withMongoCredentials,
} from "./mongo-auth";
import { type BusCredentials, natsServerConfig, type OperatorUser, writeNatsServerConfig } from "./nats-auth";
import { freePort } from "./ports";
import { isMongoLoginRefused, natsAnswers, probeMongo, probeNats, waitUntil } from "./probe";
import { type Backend, externalBackend, startProcess } from "./process";
import { defaultToolsDir } from "./root";

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

/**
 * The nats-server every NATS started here runs (a stack's, a cluster node's, a test's): the one
 * infra/local/setup.sh builds into `toolsDir` at a pinned version, since Debian's v2.9.10 loses KV
 * TTLs after restarts in a cluster; else `nats-server` on PATH, on a machine where setup has not
 * run. Throws, saying how to get one, when there is neither.
 */
export function natsServerBinary(toolsDir = defaultToolsDir()): string {
  const built = join(toolsDir, "nats-server");
  if (existsSync(built)) return built;
  if (onPath("nats-server")) return "nats-server";
  throw new Error("nats-server is not installed (run: bash infra/local/setup.sh)");
}

/** Starts `natsServerBinary` on `host:port` with JetStream and this stack's users, its data under `dataDir`. */
export async function startNats(
  options: Omit<NatsOptions, "url" | "reuseUnauthenticated"> & { host: string; port: number },
): Promise<NatsBackend> {
  const binary = natsServerBinary(options.toolsDir);
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
  const started = startProcess("nats-server", binary, ["-c", configFile], join(dataDir, "logs"));
  const url = `nats://${host}:${port}`;
  const auth = { user: "cli", password: options.credentials.cli };
  await waitUntil(() => natsAnswers(url, { auth }), 15_000, `nats-server on ${host}:${port}`);
  return { url, origin: "started", engine: "nats-server", pid: started.child.pid, stop: started.stop };
}

export interface MongoOptions extends BackendOptions {
  /** Use a server at `url` that admits anyone: only when the operator says so explicitly. */
  reuseUnauthenticated?: boolean;
}

export interface MongoBackend extends Backend {
  /** Set when the stack did not get what `url` asked for, e.g. another server held the port. */
  note?: string;
}

/**
 * A MongoDB-wire server that requires a login. A `url` with a login of its own is the operator's
 * server: used when it admits that login, else an error. A `url` without one is the stack's own:
 * the server there when it admits the credentials kept with `dataDir` (one an earlier stack
 * started), else one started here (see `startMongo`). A server there that wants other credentials is
 * an error saying so, not a timeout later; one that admits anyone is never used unless
 * `reuseUnauthenticated`: ours starts on a free port instead.
 */
export async function ensureMongo(options: MongoOptions): Promise<MongoBackend> {
  const { url, dataDir } = options;
  if (carriesMongoCredentials(url)) {
    const state = await probeMongo(url);
    if (state === "answers") return externalBackend(url, "mongodb");
    throw new Error(
      state === "refused"
        ? `MongoDB at ${redactMongoUrl(url)} refuses the login in its URL`
        : `MongoDB at ${redactMongoUrl(url)} does not answer`,
    );
  }
  const anonymous = await probeMongo(url);
  if (anonymous === "down") return startMongo(options);
  if (anonymous === "answers" && options.reuseUnauthenticated) {
    return { ...externalBackend(url, "mongodb"), note: "admits clients without credentials" };
  }
  const { host, port } = hostAndPort(url, 27017);
  if (anonymous === "refused") {
    const file = mongoCredentialsFile(dataDir);
    const own = withMongoCredentials(url, localMongoCredentials(file));
    if ((await probeMongo(own)) === "answers") return externalBackend(own, "mongodb");
    throw new Error(
      `a MongoDB-wire server at ${host}:${port} requires a login and refuses the one in ${file}; put its user in MONGO_URL (mongodb://user:password@${host}:${port}/agentnet?authSource=admin), or stop it`,
    );
  }
  const free = await freePort();
  const ownUrl = new URL(url);
  ownUrl.port = String(free);
  const started = await startMongo({ ...options, url: ownUrl.toString() });
  return {
    ...started,
    note: `port ${port} is held by a MongoDB-wire server that admits anyone; started ours on port ${free}`,
  };
}

/**
 * Starts a MongoDB-wire server for `url`'s host and port with its data under `dataDir`, admitting
 * only the user of `mongoCredentialsFile(dataDir)` (generated on first use): `mongod --auth` when
 * installed, else FerretDB v1 with its SQLite backend (built by infra/local/setup.sh) and its new
 * authentication, which checks a SCRAM login on every command but `hello`, `ping` and the login
 * itself. Returns the URL carrying that login. The data directory is 0700: the database files are
 * not for the host's other users.
 */
export async function startMongo({ url, dataDir, toolsDir }: BackendOptions): Promise<Backend> {
  const { host, port } = hostAndPort(url, 27017);
  const logDir = join(dataDir, "logs");
  const credentialsFile = mongoCredentialsFile(dataDir);
  const credentials = localMongoCredentials(credentialsFile);
  const ownUrl = withMongoCredentials(url, credentials);
  let server: MongoServerCommand;
  if (onPath("mongod")) {
    server = mongodServer(join(dataDir, "mongod"), host, port);
  } else {
    const binary = join(toolsDir ?? defaultToolsDir(), "ferretdb");
    if (!existsSync(binary)) {
      throw new Error(
        `MongoDB does not answer at ${url} and FerretDB is not built (run: bash infra/local/setup.sh)`,
      );
    }
    server = ferretdbServer(binary, join(dataDir, "ferretdb"), host, port, credentials);
  }
  mkdirSync(server.storeDir, { recursive: true, mode: 0o700 });
  chmodSync(server.storeDir, 0o700);
  const started = startProcess(server.name, server.command, server.args, logDir, server.env);
  const engine = server.engine;
  try {
    const serving = async () => {
      if (started.child.exitCode !== null) {
        throw new Error(
          `${engine} exited (code ${started.child.exitCode}); see ${join(logDir, `${server.name}.log`)}`,
        );
      }
      return (await probeMongo(url)) !== "down";
    };
    await waitUntil(serving, 30_000, `${engine} on ${host}:${port}`);
    if (server.name === "mongod" && (await probeMongo(ownUrl)) === "refused") {
      await createFirstMongodUser(url, credentials);
    }
    if ((await probeMongo(ownUrl)) !== "answers") {
      throw new Error(
        `${engine} on ${server.storeDir} refuses the login in ${credentialsFile}: that data was set up with another one. Restore the file it was set up with, or move ${server.storeDir} away to start with empty data`,
      );
    }
  } catch (error) {
    await started.stop();
    throw error;
  }
  return { url: ownUrl, origin: "started", engine, pid: started.child.pid, stop: started.stop };
}

interface MongoServerCommand {
  name: string;
  engine: string;
  storeDir: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}

const mongodServer = (storeDir: string, host: string, port: number): MongoServerCommand => ({
  name: "mongod",
  engine: "mongod",
  storeDir,
  command: "mongod",
  args: ["--auth", "--dbpath", storeDir, "--bind_ip", host, "--port", String(port)],
});

function ferretdbServer(
  binary: string,
  storeDir: string,
  host: string,
  port: number,
  credentials: MongoCredentials,
): MongoServerCommand {
  return {
    name: "ferretdb",
    engine: "ferretdb (sqlite)",
    storeDir,
    command: binary,
    args: [
      "--handler=sqlite",
      `--sqlite-url=file:${storeDir}/`,
      `--state-dir=${storeDir}`,
      `--listen-addr=${host}:${port}`,
      "--debug-addr=-",
      "--telemetry=disable",
      "--log-level=warn",
    ],
    // Flags through the environment: the password must not be on the command line. FerretDB creates
    // the user when the `admin` database does not exist yet (new data, or data from before
    // authentication) and keeps it on a restart with the same data.
    env: {
      FERRETDB_TEST_ENABLE_NEW_AUTH: "true",
      FERRETDB_SETUP_DATABASE: "admin",
      FERRETDB_SETUP_USERNAME: credentials.username,
      FERRETDB_SETUP_PASSWORD: credentials.password,
    },
  };
}

/**
 * mongod's localhost exception: until the first user exists, a client on loopback may create one.
 * Data that already has users refuses this, and `startMongo` reports the login it cannot use.
 */
async function createFirstMongodUser(url: string, credentials: MongoCredentials) {
  const client = new mongoose.mongo.MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.db("admin").command({
      createUser: credentials.username,
      pwd: credentials.password,
      roles: [{ role: "root", db: "admin" }],
    });
  } catch (error) {
    if (!isMongoLoginRefused(error)) throw error;
  } finally {
    await client.close();
  }
}
