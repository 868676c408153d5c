import { chmodSync, existsSync, mkdirSync, statfsSync } from "node:fs";
import { join } from "node:path";
import type { BusService } from "@agentnet/contracts";
import {
  type Backend,
  ensureMongo,
  ensureNats,
  findRepoRoot,
  localBusCredentials,
  redactMongoUrl,
} from "@agentnet/local-backends";
import { busCredentialsFile, localDataDir } from "../bus-credentials";
import type { CliEnv } from "../env";
import { ensurePortsFree } from "../processes";
import { localSealingKey } from "../sealing-key";
import { type RunningService, type ServiceSpec, startService, stopService } from "../services";
import { claimStack } from "../stack-file";
import { onStopSignals } from "../stop-signals";

const pad = (text: string) => text.padEnd(20);

/**
 * `agentnet up`: first stops what a killed `up` on the same data left running, then starts the
 * local backends it cannot reach, then every service as its own process. Prints one line per part
 * once it is healthy and runs until a stop signal (Ctrl-C, SIGTERM, SIGHUP), also while starting,
 * or until a service keeps failing to start; then stops everything it started, services first.
 * A second Ctrl-C kills everything at once.
 */
export async function up(env: CliEnv, print: (line: string) => void): Promise<number> {
  const root = findRepoRoot();
  const dataDir = localDataDir(env);
  const logDir = join(dataDir, "logs");
  const backends: Backend[] = [];
  const services: RunningService[] = [];
  let stopping = false;

  // Edges first, so clients are drained while the services behind them still answer; then the
  // rest; the backends last, once nothing uses them.
  const stopAll = async () => {
    stopping = true;
    const edges = services.filter((service) => EDGES.has(service.spec.name));
    await Promise.all(edges.map((service) => stopService(service)));
    await Promise.all(
      services.filter((service) => !edges.includes(service)).map((service) => stopService(service)),
    );
    for (const backend of backends.reverse()) {
      await backend.stop();
      if (backend.pid !== undefined) claim.forget(backend.pid);
    }
    claim.release();
  };
  /** Starts a service and keeps its pid in the stack file while it runs. */
  const launch = (spec: ServiceSpec) => {
    const service = startService(spec, root, logDir);
    const { pid } = service.child;
    claim.record(spec.name, EDGES.has(spec.name) ? "edge" : "service", pid);
    void service.exited.then(() => pid !== undefined && claim.forget(pid));
    return service;
  };
  const recordBackend = (backend: Backend) => {
    backends.push(backend);
    if (backend.origin === "started") claim.record(backend.engine, "backend", backend.pid);
  };

  // The stack's data (credentials, sealing key, databases, logs) is its user's alone.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const claim = claimStack(dataDir);

  // After SIGHUP the terminal is gone and writing to it fails: stopping the stack matters more than
  // saying so.
  process.stdout.on("error", () => undefined);
  let stopRequested = false;
  const stopRequest = new Promise<void>((resolve) =>
    onStopSignals({
      stop: () => {
        stopRequested = true;
        print(`${STOPPING} (a second Ctrl-C kills everything at once)`);
        resolve();
      },
      // Whatever is being awaited (a drain, a backend starting) is abandoned: exiting runs every
      // child's exit hook, which kills it, and the stack file's record covers the rest.
      stopAtOnce: () => {
        print("stopping at once: killing every process of the stack");
        claim.killAll();
        claim.release();
        process.exit(130);
      },
    }),
  );
  const unlessStopRequested = () => {
    if (stopRequested) throw new StopRequested();
  };

  try {
    if (claim.leftovers.processes.length > 0) {
      print(
        `${pad("leftovers")}stopping what the killed agentnet up (pid ${claim.leftovers.upPid}) left running: ${claim.leftovers.processes.map((leftover) => `${leftover.name} (pid ${leftover.pid})`).join(", ")}`,
      );
      await claim.stopLeftovers();
      unlessStopRequested();
    }
    await ensurePortsFree([
      { part: "api-gateway", host: env.AGN_API_HOST, port: env.AGN_API_PORT, variable: "AGN_API_PORT" },
      { part: "gateway-proxy", host: env.AGN_API_HOST, port: env.AGN_PROXY_PORT, variable: "AGN_PROXY_PORT" },
      {
        part: "demo-upstream",
        host: "127.0.0.1",
        port: env.AGN_DEMO_UPSTREAM_PORT,
        variable: "AGN_DEMO_UPSTREAM_PORT",
      },
    ]);
    const credentials = localBusCredentials(busCredentialsFile(dataDir));
    const nats = await ensureNats({
      url: env.NATS_URL,
      dataDir,
      credentials,
      reuseUnauthenticated: env.AGN_NATS_REUSE_UNAUTHENTICATED,
    });
    recordBackend(nats);
    claim.setNatsUrl(nats.url);
    print(
      `${pad("nats")}${nats.url} (${nats.origin === "started" ? `started ${nats.engine}` : "already running"}${nats.note ? `; ${nats.note}` : ""})`,
    );
    unlessStopRequested();
    const mongo = await ensureMongo({
      url: env.MONGO_URL,
      dataDir,
      reuseUnauthenticated: env.AGN_MONGO_REUSE_UNAUTHENTICATED,
    });
    recordBackend(mongo);
    print(
      `${pad("mongodb")}${redactMongoUrl(mongo.url)} (${mongo.origin === "started" ? `started ${mongo.engine}` : "already running"}${mongo.note ? `; ${mongo.note}` : ""})`,
    );

    const builtDashboard = join(root, "apps", "dashboard", "dist");
    const dashboardDir = existsSync(join(builtDashboard, "index.html")) ? builtDashboard : undefined;
    const sealingKey = localSealingKey(env.AGN_SEALING_KEY, join(dataDir, "sealing.key"));
    const common = {
      NATS_URL: nats.url,
      LOG_LEVEL: env.LOG_LEVEL,
      AGN_REQUESTS_STREAM_MAX_BYTES: String(requestStreamMaxBytes(dataDir)),
    };
    // Each service joins the bus as itself, with only its own subjects (busPermissions).
    const bus = (service: BusService) => ({
      ...common,
      NATS_USER: service,
      NATS_PASSWORD: credentials[service],
    });
    const specs: ServiceSpec[] = [
      {
        name: "control-plane",
        app: "control-plane",
        env: { ...bus("control-plane"), MONGO_URL: mongo.url, AGN_SEALING_KEY: sealingKey },
        address: `nats ${nats.url}`,
      },
      {
        name: "provider-verifier",
        app: "provider-verifier",
        env: bus("provider-verifier"),
        address: `nats ${nats.url}`,
      },
      {
        name: "telemetry",
        app: "telemetry",
        // A batch's events outlive V8's default 16 MiB young generation; see apps/telemetry/README.md.
        nodeArgs: ["--max-semi-space-size=64"],
        env: {
          ...bus("telemetry"),
          AGN_DATA_DIR: dataDir,
          ...(env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: env.CLICKHOUSE_URL } : {}),
        },
        address: env.CLICKHOUSE_URL ? `clickhouse ${env.CLICKHOUSE_URL}` : `chdb ${join(dataDir, "chdb")}`,
      },
      {
        name: "consumption",
        app: "consumption",
        // Settled batches outlive V8's default 16 MiB young generation; see apps/consumption/README.md.
        nodeArgs: ["--max-semi-space-size=64"],
        env: { ...bus("consumption"), MONGO_URL: mongo.url },
        address: `nats ${nats.url}`,
      },
      {
        name: "gateway-proxy",
        app: "gateway-proxy",
        env: {
          ...bus("gateway-proxy"),
          AGN_SEALING_KEY: sealingKey,
          AGN_PROXY_HOST: env.AGN_API_HOST,
          AGN_PROXY_PORT: String(env.AGN_PROXY_PORT),
          // The demo upstream listens on loopback, which the proxy refuses unless allowed: allowed
          // by address and port, besides what the operator allows.
          AGN_ALLOWED_PRIVATE_UPSTREAMS: [
            `127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}`,
            env.AGN_ALLOWED_PRIVATE_UPSTREAMS,
          ]
            .filter((entry) => entry !== "")
            .join(","),
        },
        address: `http://${env.AGN_API_HOST}:${env.AGN_PROXY_PORT}`,
      },
      {
        name: "api-gateway",
        app: "api-gateway",
        env: {
          ...bus("api-gateway"),
          AGN_API_HOST: env.AGN_API_HOST,
          AGN_API_PORT: String(env.AGN_API_PORT),
          AGN_DASHBOARD_DIR: dashboardDir ?? "",
        },
        address: `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}`,
      },
    ];
    specs.push({
      name: "demo-upstream",
      app: "cli",
      entry: join("src", "demo-upstream.ts"),
      env: { AGN_DEMO_UPSTREAM_PORT: String(env.AGN_DEMO_UPSTREAM_PORT) },
      address: `http://127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT} (OpenAI and Anthropic formats, canned answers, for quickstart)`,
    });
    unlessStopRequested();
    for (const spec of specs) services.push(launch(spec));
    for (const service of services) {
      await Promise.race([service.ready, stopRequest]);
      unlessStopRequested();
      print(`${pad(service.spec.name)}${service.spec.address}`);
    }
    print(
      dashboardDir
        ? `${pad("dashboard")}http://${env.AGN_API_HOST}:${env.AGN_API_PORT}/`
        : `${pad("dashboard")}not built: pnpm --filter @agentnet/dashboard build`,
    );
    print(`${pad("logs")}${logDir}`);
    print(
      "ready: `pnpm agentnet quickstart` sets up an account you can send requests with; Ctrl-C stops the stack",
    );
  } catch (error) {
    await stopAll();
    if (!(error instanceof StopRequested)) throw error;
    print("stopped");
    return 0;
  }

  return new Promise<number>((resolve) => {
    const shutdown = (code: number) => {
      if (stopping) return;
      void stopAll().then(() => {
        print("stopped");
        resolve(code);
      });
    };
    void stopRequest.then(() => shutdown(0));
    // A service that dies is restarted with backoff; the others keep running. The stack stops only
    // when one keeps failing to start.
    const supervise = (index: number) => {
      const current = services[index];
      if (!current) return;
      void current.exited.then(async (code) => {
        for (let failures = 0; !stopping; failures++) {
          if (failures >= MAX_FAILED_RESTARTS) {
            print(
              `${current.spec.name} failed to start ${failures} times in a row (see ${join(logDir, `${current.spec.name}.log`)}); stopping the stack`,
            );
            print(STOPPING);
            shutdown(1);
            return;
          }
          const delayMs = Math.min(MAX_RESTART_DELAY_MS, 1_000 * 2 ** failures);
          print(`${pad(current.spec.name)}exited (code ${code}); restarting in ${delayMs / 1000} s`);
          await new Promise((wake) => setTimeout(wake, delayMs));
          if (stopping) return;
          const restarted = launch(current.spec);
          services[index] = restarted;
          try {
            await restarted.ready;
          } catch {
            code = restarted.child.exitCode;
            continue;
          }
          print(`${pad(current.spec.name)}restarted: ${current.spec.address}`);
          supervise(index);
          return;
        }
      });
    };
    services.forEach((_, index) => {
      supervise(index);
    });
  });
}

/**
 * The request stream's byte limit on this machine: a quarter of the free space where the stack
 * keeps its data (NATS stores the stream there), between 256 MiB and 20 GiB, so the disk never
 * fills before the stream discards its oldest events.
 */
function requestStreamMaxBytes(dataDir: string): number {
  const { bavail, bsize } = statfsSync(dataDir);
  return Math.min(20 * 1024 ** 3, Math.max(256 * 1024 ** 2, Math.floor((bavail * bsize) / 4)));
}

const STOPPING = "stopping: draining the gateway proxy and the API, then the services, then the backends";

/** A stop signal came while the stack was starting: what started is stopped, and `up` exits 0. */
class StopRequested extends Error {}

/** The parts clients talk to: stopped (drained) before the services behind them. */
const EDGES = new Set(["gateway-proxy", "api-gateway"]);
/** Restarts in a row that fail before the stack gives up on a service. */
const MAX_FAILED_RESTARTS = 5;
const MAX_RESTART_DELAY_MS = 30_000;
