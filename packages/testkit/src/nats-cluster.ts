import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BusService } from "@agentnet/contracts";
import {
  type BusCredentials,
  freePorts,
  generateBusCredentials,
  natsServerConfig,
  type OperatorUser,
  type startProcess,
  waitUntil,
  writeNatsServerConfig,
} from "@agentnet/local-backends";
import { inject } from "vitest";
import { spawnTestNats, testOperator } from "./isolated-nats";
import "./provided";

export interface NatsClusterNode {
  /** Its `server_name` (`n1`, `n2`, ...): JetStream's stream and meta leaders are named by it. */
  name: string;
  clientUrl: string;
  port: number;
  /** Its monitoring port (`/jsz`, `/routez`, `/healthz`). */
  monitorPort: number;
  /** The running process's id; undefined while the node is down. */
  readonly pid: number | undefined;
  /** Whether the process runs (a stopped one, SIGSTOP, still runs). */
  running(): boolean;
  /** Sends `signal` (SIGKILL, SIGSTOP, SIGCONT, ...) to the node's process. */
  kill(signal?: NodeJS.Signals): void;
  /**
   * SIGSTOP, resolved once the process is stopped: a signal lands a moment after `kill` returns,
   * and a message sent meanwhile may still be handled.
   */
  freeze(): Promise<void>;
  /** SIGCONT, resolved once the process runs again. */
  thaw(): Promise<void>;
  /** Starts the node again with the same configuration and store_dir, once it answers clients. */
  restart(): Promise<void>;
  /** Stops the node (SIGTERM, SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface TestNatsCluster {
  /** Every node's client URL, comma-joined: a `NATS_URL` that fails over between them. */
  url: string;
  urls: string[];
  nodes: NatsClusterNode[];
  /** Each service's password: the same users and permissions on every node. */
  credentials: BusCredentials;
  /** A user with every permission, for what the test itself does on the bus. */
  operator: OperatorUser;
  /** The replicas a stream needs to survive one node's loss here: the cluster's size. */
  replicas: number;
  /** The environment a service's process needs to join the cluster as `service` (with `AGN_STREAM_REPLICAS`). */
  serviceEnv(service: BusService): Record<string, string>;
  /**
   * Resolves once every running node (a frozen one too: SIGCONT it first) has routes to every
   * other, JetStream has a meta leader, and every stream has a leader and its replicas caught up.
   */
  formed(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Nodes to start; 3 by default (the smallest cluster that survives one node's loss). */
  size?: number;
  /** Where the nodes' configurations, stores and logs go; the test run's directory by default. */
  dir?: string;
}

interface NodePorts {
  name: string;
  port: number;
  routePort: number;
  monitorPort: number;
}

/**
 * A NATS cluster of this test file: `size` nats-server processes on loopback, each with its own
 * JetStream store, routes to the others, and the same per-service users and permissions as
 * `isolatedNats`. Resolves once the cluster has formed and JetStream has a meta leader. Every node
 * can be killed (SIGKILL, SIGSTOP/SIGCONT) and restarted on its own store; nodes die with the
 * test process, and the run's teardown kills any left (each node's directory holds its pid).
 */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<TestNatsCluster> {
  const size = options.size ?? 3;
  const baseDir = options.dir ?? inject("runDir");
  const credentials = generateBusCredentials();
  const operator = testOperator();
  const route = { user: "route", password: generateBusCredentials().cli };
  const clusterName = `agn-test-${Math.random().toString(36).slice(2, 8)}`;
  const free = await freePorts(3 * size);
  const ports: NodePorts[] = Array.from({ length: size }, (_, index) => ({
    name: `n${index + 1}`,
    port: free[3 * index] ?? 0,
    routePort: free[3 * index + 1] ?? 0,
    monitorPort: free[3 * index + 2] ?? 0,
  }));
  const routes = ports.map((node) => `nats://127.0.0.1:${node.routePort}`);
  const nodes = ports.map((node) => {
    const dir = mkdtempSync(join(baseDir, `nats-${node.name}-`));
    const configFile = join(dir, "nats-server.conf");
    writeNatsServerConfig(
      configFile,
      natsServerConfig({
        host: "127.0.0.1",
        port: node.port,
        storeDir: join(dir, "jetstream"),
        serverName: node.name,
        cluster: { name: clusterName, host: "127.0.0.1", port: node.routePort, routes, ...route },
        passwords: credentials,
        operators: [operator],
        monitorPort: node.monitorPort,
      }),
    );
    return clusterNode(node, dir, configFile, operator);
  });
  await Promise.all(nodes.map((node) => node.restart()));
  const urls = nodes.map((node) => node.clientUrl);
  const url = urls.join(",");
  /** The meta leader every running node names; a node that names none answers JetStream requests with "temporarily unavailable". */
  const metaLeader = async () => {
    const named = new Set<string | undefined>();
    for (const node of nodes.filter((each) => each.running())) {
      const jsz = await monitor<MetaPage>(node.monitorPort, "jsz");
      named.add(jsz?.meta_cluster?.leader || undefined);
    }
    return named.size === 1 ? [...named][0] : undefined;
  };
  const formed = (timeoutMs = 30_000) =>
    waitUntil(
      async () => {
        const running = nodes.filter((node) => node.running());
        for (const node of running) {
          const routez = await monitor<{ num_routes?: number }>(node.monitorPort, "routez");
          if ((routez?.num_routes ?? 0) < running.length - 1) return false;
          if (!(await streamsSettled(node))) return false;
        }
        return (await metaLeader()) !== undefined;
      },
      timeoutMs,
      `a NATS cluster of ${running(nodes)} nodes with a JetStream meta leader and every stream led and current`,
    ).catch(async (error: unknown) => {
      const states = await Promise.all(nodes.map(describeNode));
      throw new Error(`${error instanceof Error ? error.message : String(error)}; ${states.join("; ")}`);
    });
  await formed();
  return {
    url,
    urls,
    nodes,
    credentials,
    operator,
    replicas: size,
    serviceEnv: (service) => ({
      NATS_URL: url,
      NATS_USER: service,
      NATS_PASSWORD: credentials[service],
      AGN_STREAM_REPLICAS: String(size),
    }),
    formed,
    stop: async () => {
      await Promise.all(nodes.map((node) => node.stop()));
      for (const node of nodes) node.remove();
    },
  };
}

const running = (nodes: NatsClusterNode[]) => nodes.filter((node) => node.running()).length;

interface JetStreamPage {
  account_details?: {
    stream_detail?: {
      name?: string;
      cluster?: { leader?: string; replicas?: { name?: string; current?: boolean }[] };
    }[];
  }[];
}

/**
 * Whether every stream a node holds has a leader and, where this node leads, every replica caught
 * up (only a leader knows its followers: they report each other as behind). A node restarted a
 * moment ago has routes and a meta leader before its streams have elected theirs, and a test that
 * goes on then meets API timeouts.
 */
async function streamsSettled(node: NatsClusterNode): Promise<boolean> {
  const jsz = await monitor<JetStreamPage>(node.monitorPort, "jsz?accounts=true&streams=true");
  if (!jsz) return false;
  const streams = (jsz.account_details ?? []).flatMap((account) => account.stream_detail ?? []);
  return streams.every(
    ({ cluster }) =>
      cluster?.leader !== undefined &&
      (cluster.leader !== node.name || (cluster.replicas ?? []).every((replica) => replica.current === true)),
  );
}

/**
 * What a node says of its routes, its meta group and each stream's leader and replicas: what a
 * cluster that did not form within its bound looked like, said in the failure.
 */
async function describeNode(node: NatsClusterNode): Promise<string> {
  if (!node.running()) return `${node.name} down`;
  const [routez, jsz] = await Promise.all([
    monitor<{ num_routes?: number }>(node.monitorPort, "routez"),
    monitor<JetStreamPage & MetaPage>(node.monitorPort, "jsz?accounts=true&streams=true"),
  ]);
  if (!jsz) return `${node.name} (state ${processState(node.pid)}) does not answer /jsz`;
  const meta = jsz.meta_cluster;
  const streams = (jsz.account_details ?? []).flatMap((account) =>
    (account.stream_detail ?? []).map(
      ({ name, cluster }) => `${name} led by ${cluster?.leader ?? "none"} [${peerList(cluster?.replicas)}]`,
    ),
  );
  return `${node.name}: ${routez?.num_routes ?? "?"} routes, meta leader ${meta?.leader || "none"} of ${meta?.cluster_size ?? "?"} [${peerList(meta?.replicas)}], streams: ${streams.join(", ") || "none"}`;
}

/** A group's peers as a node reports them, each marked when behind. */
const peerList = (peers: { name?: string; current?: boolean }[] = []) =>
  peers.map((peer) => `${peer.name}${peer.current ? "" : "(behind)"}`).join(" ");

interface MetaPage {
  meta_cluster?: {
    leader?: string;
    cluster_size?: number;
    replicas?: { name?: string; current?: boolean }[];
  };
}

/** The state letter of `/proc/<pid>/stat` (`T` stopped, `S` sleeping, `R` running), if the process is there. */
function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    return /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** A page of a node's monitoring listener, or undefined when it does not answer. */
async function monitor<T>(port: number, page: string): Promise<T | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/${page}`, { signal: AbortSignal.timeout(1_000) });
    return response.ok ? ((await response.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

function clusterNode(
  ports: NodePorts,
  dir: string,
  configFile: string,
  operator: OperatorUser,
): NatsClusterNode & { remove(): void } {
  const clientUrl = `nats://127.0.0.1:${ports.port}`;
  let server: ReturnType<typeof startProcess> | undefined;
  const alive = () =>
    server !== undefined && server.child.exitCode === null && server.child.signalCode === null;
  return {
    name: ports.name,
    clientUrl,
    port: ports.port,
    monitorPort: ports.monitorPort,
    get pid() {
      return alive() ? server?.child.pid : undefined;
    },
    running: alive,
    kill(signal = "SIGKILL") {
      if (alive()) server?.child.kill(signal);
    },
    async freeze() {
      this.kill("SIGSTOP");
      await waitUntil(async () => processState(this.pid) === "T", 5_000, `${ports.name} stopped`);
    },
    async thaw() {
      this.kill("SIGCONT");
      await waitUntil(async () => processState(this.pid) !== "T", 5_000, `${ports.name} running again`);
    },
    async restart() {
      await this.stop();
      server = await spawnTestNats(ports.name, dir, configFile, clientUrl, operator);
    },
    async stop() {
      if (!alive()) return;
      // A stopped (SIGSTOP) process takes no SIGTERM until it runs again.
      server?.child.kill("SIGCONT");
      await server?.stop();
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
