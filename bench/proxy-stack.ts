/**
 * What bench:proxy, bench:streams and bench:cluster start: the backends of a one-node stack, the
 * mock vendor, gateway-proxy processes as deployed, and an account whose policy routes to the
 * vendor, plain or with a cap far from binding.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { request } from "@agentnet/bus";
import { type Caller, ControlPlane } from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { ensureMongo, findRepoRoot, freePort } from "@agentnet/local-backends";
import { startVerifier } from "@agentnet/provider-verifier/app";
import { generateSealingKey, parseSealingKeys } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import type { NatsConnection } from "@nats-io/transport-node";
import mongoose from "mongoose";
import { startBenchNats } from "./bus";

export const ROOT = findRepoRoot();
const tsx = (root: string) => join(root, "node_modules", ".bin", "tsx");

/** The young generation the proxy and consumption are deployed with (their READMEs, "Node flags"). */
const YOUNG_GENERATION = "--max-semi-space-size=64";

const proxyBundles = new Map<string, Promise<string>>();

/**
 * The proxy's production bundle in `root` (apps/gateway-proxy/dist/main.js, what its image runs:
 * esbuild's output, not tsx's per-module transform), built once per run and root.
 */
function proxyBundle(root: string): Promise<string> {
  let bundle = proxyBundles.get(root);
  if (!bundle) {
    const appDir = join(root, "apps", "gateway-proxy");
    bundle = promisify(execFile)(process.execPath, [join(root, "scripts", "bundle-app.mjs")], {
      cwd: appDir,
    }).then(() => join(appDir, "dist", "main.js"));
    proxyBundles.set(root, bundle);
  }
  return bundle;
}

/**
 * What a one-node bench of the proxy stands on: its own NATS, the bench's MongoDB with a database
 * of this run (`databaseName` and the time: its credentials are sealed with this run's key), and
 * the control plane and the verifier in this process. `stop` ends them, the operator's `nc` last.
 */
export async function startBenchBackends(databaseName: string) {
  const logger = createLogger("bench", "warn");
  const nats = await startBenchNats();
  const mongo = await ensureMongo({
    url: process.env.BENCH_MONGO_URL ?? "mongodb://127.0.0.1:27455/agentnet_bench",
    dataDir: join(ROOT, ".data", "bench"),
  });
  const nc = await nats.connectOperator("bench");
  const database = new URL(mongo.url);
  database.pathname = `/${databaseName}_${Date.now()}`;
  const connection = await mongoose.createConnection(database.toString()).asPromise();
  const sealingText = generateSealingKey();
  await startControlPlane({
    nc: await nats.connectAs("control-plane"),
    connection,
    logger,
    sealingKey: parseSealingKeys(sealingText),
  });
  await startVerifier({ nc: await nats.connectAs("provider-verifier"), logger });
  return {
    nats,
    nc,
    mongo,
    databaseUrl: database.toString(),
    sealingText,
    async stop() {
      await nc.drain();
      await connection.close();
      await mongo.stop();
      await nats.stop();
    },
  };
}

/** Starts a process and resolves once its output shows `readyText`; rejects if it exits first or takes a minute. */
export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  readyText: string,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(args[0] ?? "node", args.slice(1), {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start: ${output.slice(-2000)}`)),
      60_000,
    );
    const onData = (data: Buffer) => {
      output += data.toString();
      if (output.includes(readyText)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}: ${output.slice(-2000)}`)));
  });
}

/**
 * A script of `bench/` run with tsx in its own process on a free port (`PORT`), once it logs
 * `"ready":true`; `wrap` wraps its command line (e.g. `taskset -c 1 ...`).
 */
async function startBenchScript(
  name: string,
  [script, ...args]: [string, ...string[]],
  env: NodeJS.ProcessEnv,
  wrap: (args: string[]) => string[] = (command) => command,
  nodeArgs: string[] = [],
) {
  const port = await freePort();
  const child = await startChild(
    name,
    wrap([tsx(ROOT), ...nodeArgs, join(ROOT, "bench", script), ...args]),
    { ...env, PORT: String(port) },
    '"ready":true',
  );
  return { port, child };
}

/**
 * The mock vendor (`mock-upstream.ts`) in its own process; `url` is its origin. `env` sets its
 * knobs (`MOCK_STREAM_EVENTS`) and `wrap` its command line.
 */
export async function startMockUpstream(env: NodeJS.ProcessEnv = {}, wrap?: (args: string[]) => string[]) {
  const { port, child } = await startBenchScript("upstream", ["mock-upstream.ts", "serve"], env, wrap);
  return { port, url: `http://127.0.0.1:${port}`, child };
}

/**
 * BENCH_PROXY_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: node flags for the proxies
 * under load, agentnet's and the node floor, so that their profiles can be set side by side.
 */
const proxyNodeArgs = () => process.env.BENCH_PROXY_NODE_ARGS?.split(" ").filter(Boolean) ?? [];

/**
 * The "node floor" (`node-floor.ts`) in its own process, forwarding to `upstreamUrl`, with the
 * proxy's young generation: the two differ in code, not in heap settings. `upstreamConnections`
 * bounds its pool to the vendor (node-floor.ts's default otherwise); `wrap` wraps its command line.
 */
export async function startNodeFloor(
  upstreamUrl: string,
  options: { wrap?: (args: string[]) => string[]; upstreamConnections?: number } = {},
) {
  const { port, child } = await startBenchScript(
    "node floor",
    ["node-floor.ts"],
    {
      UPSTREAM: upstreamUrl,
      UPSTREAM_CONNECTIONS: options.upstreamConnections?.toString(),
      NODE_OPTIONS: [process.env.NODE_OPTIONS, YOUNG_GENERATION].filter(Boolean).join(" "),
    },
    options.wrap,
    proxyNodeArgs(),
  );
  return {
    pid: child.pid ?? 0,
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    statsUrl: `http://127.0.0.1:${port}/stats`,
  };
}

export interface ProxyProcessOptions {
  name: string;
  /** How it joins the bus (`NATS_URL`, its user, `AGN_STREAM_REPLICAS`). */
  busEnv: Record<string, string>;
  sealingText: string;
  upstreamPort: number;
  /** With `AGN_METRICS_PORT` (nothing scrapes it: what is measured is the counting on the request path). */
  metrics: boolean;
  /** The checkout whose proxy runs; this one by default. */
  root?: string;
  /** More of its settings (e.g. `AGN_PROXY_WORKERS`). */
  env?: Record<string, string>;
  /** Wraps the command line (e.g. `taskset -c 1 ...`). */
  wrap?: (args: string[]) => string[];
}

/** A gateway-proxy as deployed (`node --max-semi-space-size=64 dist/main.js`, the bundle of `root`), on a port of its own. */
export async function startProxyProcess(options: ProxyProcessOptions) {
  const root = resolve(options.root ?? ROOT);
  const port = await freePort();
  const metricsPort = options.metrics ? await freePort() : undefined;
  const args = [process.execPath, YOUNG_GENERATION, ...proxyNodeArgs(), await proxyBundle(root)];
  const child = await startChild(
    options.name,
    options.wrap ? options.wrap(args) : args,
    {
      ...options.busEnv,
      AGN_SEALING_KEY: options.sealingText,
      AGN_PROXY_PORT: String(port),
      AGN_METRICS_PORT: metricsPort === undefined ? undefined : String(metricsPort),
      // The bench's vendor listens on loopback, which the proxy refuses unless allowed.
      AGN_ALLOWED_PRIVATE_UPSTREAMS: `127.0.0.1:${options.upstreamPort}`,
      LOG_LEVEL: "info",
      ...options.env,
    },
    '"ready":true',
  );
  return {
    port,
    pid: child.pid ?? 0,
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    metricsUrl: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}/metrics`,
  };
}

export type ProxyProcess = Awaited<ReturnType<typeof startProxyProcess>>;

export interface BenchAccount {
  token: string;
  caller: Caller;
}

/**
 * A new account (over the control plane, as `nc`'s operator) with the mock vendor as its provider
 * and one policy letting every member use it; `capped` adds a token limit per group and per user
 * so large that it never binds: every request is then admitted on leases and settled.
 */
export async function createBenchAccount(
  nc: NatsConnection,
  upstreamUrl: string,
  capped: boolean,
): Promise<BenchAccount> {
  const boot = await request(nc, ControlPlane.accountsBootstrap, {
    email: `bench-${Date.now()}-${capped}@example.com`,
  });
  const caller: Caller = await request(nc, ControlPlane.authResolve, { token_hash: hashToken(boot.token) });
  await request(nc, ControlPlane.settingsCreate, { caller, body: { proxy_address: "gw.bench.local" } });
  const provider = await request(nc, ControlPlane.providersCreate, {
    caller,
    body: {
      provider_id: "openai_api",
      name: "OpenAI",
      upstream_url: `${upstreamUrl}/v1`,
      api_key: "sk-bench",
    },
  });
  const big = 1_000_000_000_000;
  await request(nc, ControlPlane.policiesCreate, {
    caller,
    body: {
      name: "all",
      source_groups: caller.group_ids,
      destination_provider_ids: [provider.id],
      ...(capped
        ? {
            limits: {
              token_limit: { enabled: true, group_cap: big, user_cap: big, window_seconds: 3600 },
              budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
            },
          }
        : {}),
    },
  });
  return { token: boot.token, caller };
}

export interface ConsumptionProcessOptions {
  name: string;
  busEnv: Record<string, string>;
  /** Its database (the control plane's of the same stack). */
  mongoUrl: string;
  /** The durable consumer and the leadership key: every replica of a stack shares them. */
  durable: string;
  /** Resolves once started rather than once leading: a second replica stands by. */
  standby?: boolean;
}

/** Consumption (`consumption-service.ts`) in a process of its own, with the Node flags `agentnet up` gives it. */
export function startConsumptionProcess(options: ConsumptionProcessOptions) {
  return startChild(
    options.name,
    [
      tsx(ROOT),
      // As `agentnet up` starts it (apps/consumption/README.md, "Node flags").
      YOUNG_GENERATION,
      ...(process.env.BENCH_CONSUMPTION_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      join(ROOT, "bench", "consumption-service.ts"),
    ],
    {
      ...options.busEnv,
      BENCH_MONGO_URL: options.mongoUrl,
      BENCH_DURABLE: options.durable,
      ...(options.standby ? { BENCH_STANDBY: "1" } : {}),
    },
    '"ready":true',
  );
}

/** Stops `children` as an orchestrator would (SIGTERM) and waits for each to exit (at once if it had). */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(
    children.map(
      (child) =>
        child.exitCode !== null ||
        child.signalCode !== null ||
        new Promise((resolve) => child.once("exit", resolve)),
    ),
  );
}
