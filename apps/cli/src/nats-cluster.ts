import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type BusCredentials,
  freePorts,
  natsServerBinary,
  natsServerConfig,
  portIsFree,
  startProcess,
  waitUntil,
  writeNatsServerConfig,
} from "@agentnet/local-backends";
import { CLUSTER_NATS_NODES } from "./topology";

/** One nats-server of the local cluster: where clients and `agentnet status` reach it. */
export interface NatsNode {
  /** `nats-1`..`nats-3`: its `server_name`, its log file and its line in `up`'s output. */
  name: string;
  url: string;
  /** Its monitoring listener; `/healthz` answers 200 once its JetStream is part of the cluster. */
  monitorUrl: string;
  /** Starts (or starts again, after it died) its process, with the same configuration and data. */
  start: () => ReturnType<typeof startProcess>;
}

export interface LocalNatsCluster {
  nodes: NatsNode[];
  /** Set when the client ports asked for were not free. */
  note?: string;
}

/** The cluster's name in every node's `cluster {}` block. */
const CLUSTER_NAME = "agentnet-local";

/**
 * The user and password the nodes' routes present to each other: generated once into `file`
 * (mode 0600, like the services' passwords), so a node restarted later still joins the others.
 */
export function localRouteCredentials(file: string): { user: string; password: string } {
  if (!existsSync(file)) {
    writeFileSync(
      file,
      `${JSON.stringify({ user: "route", password: randomBytes(24).toString("base64url") }, null, 2)}\n`,
      { mode: 0o600 },
    );
  }
  return JSON.parse(readFileSync(file, "utf8")) as { user: string; password: string };
}

/**
 * Three nats-server processes on `host`, one cluster with routes between them, JetStream on each
 * with its own store under `<data>/nats-cluster/<node>`, and the same per-service users on every
 * node. Client ports are `basePort` and the two above it when free, else three free ports (said
 * in `note`); route and monitoring ports are picked free. The nodes are not started here: `up`
 * starts each (and starts it again if it dies), then awaits `clusterReady`.
 */
export async function localNatsCluster(options: {
  dataDir: string;
  host: string;
  basePort: number;
  credentials: BusCredentials;
}): Promise<LocalNatsCluster> {
  const binary = natsServerBinary();
  const { dataDir, host, basePort } = options;
  const clusterDir = join(dataDir, "nats-cluster");
  mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  const route = localRouteCredentials(join(clusterDir, "route-credentials.json"));
  const wanted = Array.from({ length: CLUSTER_NATS_NODES }, (_, index) => basePort + index);
  const wantedFree = (await Promise.all(wanted.map((port) => portIsFree(host, port)))).every(Boolean);
  const clientPorts = wantedFree ? wanted : await freePorts(CLUSTER_NATS_NODES);
  const routePorts = await freePorts(CLUSTER_NATS_NODES, clientPorts);
  const monitorPorts = await freePorts(CLUSTER_NATS_NODES, [...clientPorts, ...routePorts]);
  const routes = routePorts.map((port) => `nats://${host}:${port}`);
  const logDir = join(dataDir, "logs");
  const nodes = clientPorts.map((port, index): NatsNode => {
    const name = `nats-${index + 1}`;
    const storeDir = join(clusterDir, name);
    const configFile = join(storeDir, "nats-server.conf");
    mkdirSync(storeDir, { recursive: true, mode: 0o700 });
    writeNatsServerConfig(
      configFile,
      natsServerConfig({
        host,
        port,
        storeDir,
        passwords: options.credentials,
        monitorPort: monitorPorts[index] ?? 0,
        serverName: name,
        cluster: {
          name: CLUSTER_NAME,
          host,
          port: routePorts[index] ?? 0,
          routes,
          user: route.user,
          password: route.password,
        },
      }),
    );
    return {
      name,
      url: `nats://${host}:${port}`,
      monitorUrl: `http://${host}:${monitorPorts[index]}`,
      start: () => startProcess(name, binary, ["-c", configFile], logDir),
    };
  });
  return {
    nodes,
    ...(wantedFree
      ? {}
      : { note: `ports ${wanted.join(", ")} are not all free; the nodes listen on free ports` }),
  };
}

/** Whether `node`'s JetStream is up and part of the cluster (a meta leader is known). */
export async function nodeHealthy(node: Pick<NatsNode, "monitorUrl">): Promise<boolean> {
  try {
    const response = await fetch(`${node.monitorUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Resolves once every node is healthy: before that a service creating its streams with three
 * replicas would be refused for want of peers.
 */
export const clusterReady = (nodes: NatsNode[], timeoutMs: number) =>
  waitUntil(
    async () => (await Promise.all(nodes.map(nodeHealthy))).every(Boolean),
    timeoutMs,
    `the NATS cluster (${nodes.map((node) => node.url).join(", ")})`,
  );
