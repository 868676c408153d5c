import { chmodSync, existsSync, mkdirSync, statfsSync } from "node:fs";
import { join } from "node:path";
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
import { clusterReady, localNatsCluster } from "../nats-cluster";
import { ensurePortsFree, restartDelayMs } from "../processes";
import { localSealingKey } from "../sealing-key";
import {
  type RunningService,
  type ServiceSpec,
  ServiceStartFailure,
  startService,
  stopService,
} from "../services";
import { claimStack, type StackEndpoint } from "../stack-file";
import { edgePorts, serviceEndpoints, serviceSpecs } from "../stack-specs";
import { onStopSignals } from "../stop-signals";
import { type SupervisedNode, superviseNode } from "../supervised-node";
import { CLUSTER_NATS_NODES, type Topology } from "../topology";

const pad = (text: string) => text.padEnd(20);

/**
 * `agentnet up`: first stops what a killed `up` on the same data left running, then starts the
 * local backends it cannot reach, then every service as its own process. Prints one line per part
 * once it is healthy and runs until a stop signal (Ctrl-C, SIGTERM, SIGHUP), also while starting,
 * or until a service keeps failing to start; then stops everything it started, services first.
 * A second Ctrl-C kills everything at once. `topology` "cluster" (`up --cluster`) starts three
 * NATS nodes instead of one and replicas of every service (src/topology.ts).
 */
export async function up(
  env: CliEnv,
  print: (line: string) => void,
  topology: Topology = "single",
): Promise<number> {
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
    const edges = services.filter((service) => EDGES.has(service.spec.app));
    await Promise.all(edges.map((service) => stopService(service)));
    await Promise.all(
      services.filter((service) => !edges.includes(service)).map((service) => stopService(service)),
    );
    await Promise.all(natsNodes.map((node) => node.stop()));
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
    claim.record(spec.name, EDGES.has(spec.app) ? "edge" : "service", pid);
    void service.exited.then(() => pid !== undefined && claim.forget(pid));
    return service;
  };
  const natsNodes: SupervisedNode[] = [];
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
    const ports = edgePorts(env, topology);
    await ensurePortsFree([
      ...ports.api.map((port) => ({
        part: "api-gateway",
        host: env.AGN_API_HOST,
        port,
        variable: "AGN_API_PORT",
      })),
      ...ports.proxy.map((port) => ({
        part: "gateway-proxy",
        host: env.AGN_API_HOST,
        port,
        variable: "AGN_PROXY_PORT",
      })),
      {
        part: "demo-upstream",
        host: "127.0.0.1",
        port: env.AGN_DEMO_UPSTREAM_PORT,
        variable: "AGN_DEMO_UPSTREAM_PORT",
      },
    ]);
    const credentials = localBusCredentials(busCredentialsFile(dataDir));
    let natsUrls: string[];
    const natsEndpoints: StackEndpoint[] = [];
    if (topology === "cluster") {
      const natsUrl = new URL(env.NATS_URL);
      const cluster = await localNatsCluster({
        dataDir,
        host: natsUrl.hostname || "127.0.0.1",
        basePort: Number(natsUrl.port || 4222),
        credentials,
      });
      for (const node of cluster.nodes) {
        natsNodes.push(
          superviseNode(node, {
            claim,
            print: (name, text) => print(`${pad(name)}${text}`),
            isStopping: () => stopping,
          }),
        );
        natsEndpoints.push({ name: node.name, kind: "nats", url: node.url, monitor_url: node.monitorUrl });
      }
      natsUrls = cluster.nodes.map((node) => node.url);
      claim.setNatsUrls(natsUrls);
      await Promise.race([clusterReady(cluster.nodes, CLUSTER_READY_TIMEOUT_MS), stopRequest]);
      unlessStopRequested();
      for (const node of cluster.nodes) {
        print(`${pad(node.name)}${node.url} (started nats-server, cluster of ${CLUSTER_NATS_NODES})`);
      }
      if (cluster.note) print(`${pad("nats")}${cluster.note}`);
    } else {
      const nats = await ensureNats({
        url: env.NATS_URL,
        dataDir,
        credentials,
        reuseUnauthenticated: env.AGN_NATS_REUSE_UNAUTHENTICATED,
      });
      recordBackend(nats);
      natsUrls = [nats.url];
      claim.setNatsUrls(natsUrls);
      print(
        `${pad("nats")}${nats.url} (${nats.origin === "started" ? `started ${nats.engine}` : "already running"}${nats.note ? `; ${nats.note}` : ""})`,
      );
    }
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
    const specs = serviceSpecs({
      env,
      topology,
      natsUrls,
      credentials,
      mongoUrl: mongo.url,
      sealingKey,
      dataDir,
      dashboardDir,
      ports,
      requestStreamMaxBytes: requestStreamMaxBytes(dataDir, topology === "cluster" ? CLUSTER_NATS_NODES : 1),
    });
    claim.setEndpoints([...natsEndpoints, ...serviceEndpoints(specs)]);
    unlessStopRequested();
    for (const spec of specs) services.push(launch(spec));
    for (const [index, first] of services.entries()) {
      const { spec } = first;
      let service = first;
      // On a cluster a service's first JetStream calls wait on new three-node streams, which a
      // busy host may not make in time: one that exits before it is ready is started again, as
      // after a crash. One node's stack stops at once instead, naming the service that failed.
      for (let failures = 1; ; failures++) {
        try {
          await Promise.race([service.ready, stopRequest]);
          break;
        } catch (error) {
          if (
            topology === "single" ||
            failures >= MAX_FAILED_RESTARTS ||
            !(error instanceof ServiceStartFailure)
          ) {
            throw error;
          }
          const delayMs = restartDelayMs(failures - 1);
          print(`${pad(spec.name)}${error.reason}; restarting in ${delayMs / 1000} s`);
          await Promise.race([new Promise((wake) => setTimeout(wake, delayMs)), stopRequest]);
          unlessStopRequested();
          service = launch(spec);
          services[index] = service;
        }
      }
      unlessStopRequested();
      print(`${pad(spec.name)}${spec.address}`);
    }
    print(
      dashboardDir
        ? `${pad("dashboard")}http://${env.AGN_API_HOST}:${env.AGN_API_PORT}/`
        : `${pad("dashboard")}not built: pnpm --filter @agentnet/dashboard build`,
    );
    if (topology === "cluster") {
      print(
        `${pad("load balancer")}none: clients pick a proxy (${ports.proxy.join(", ")}) and an API (${ports.api.join(", ")}) port; docs/DEPLOY.md "A local cluster" puts nginx in front`,
      );
    }
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
          const delayMs = restartDelayMs(failures);
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
 * keeps its data (NATS stores the stream there), shared by its `copies` (one per node of a local
 * cluster, all on this disk), between 256 MiB and 20 GiB, so the disk never fills before the
 * stream discards its oldest events.
 */
function requestStreamMaxBytes(dataDir: string, copies: number): number {
  const { bavail, bsize } = statfsSync(dataDir);
  return Math.min(20 * 1024 ** 3, Math.max(256 * 1024 ** 2, Math.floor((bavail * bsize) / 4 / copies)));
}

/** How long three nodes on a busy machine may take to elect a JetStream meta leader. */
const CLUSTER_READY_TIMEOUT_MS = 60_000;

const STOPPING = "stopping: draining the gateway proxy and the API, then the services, then the backends";

/** A stop signal came while the stack was starting: what started is stopped, and `up` exits 0. */
class StopRequested extends Error {}

/** The parts clients talk to: stopped (drained) before the services behind them. */
const EDGES = new Set(["gateway-proxy", "api-gateway"]);
/** Restarts in a row that fail before the stack gives up on a service. */
const MAX_FAILED_RESTARTS = 5;
