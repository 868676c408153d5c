/**
 * How many processes of each service `agentnet up` runs, what each is called and where it
 * listens: one of each on one NATS server, or (`--cluster`) replicas of every service on a
 * three-node NATS cluster. Decided here without I/O; `commands/up.ts` starts what this says.
 */

/** The apps `up` runs as services, in the order their readiness is awaited. */
export type ServiceApp =
  | "control-plane"
  | "provider-verifier"
  | "telemetry"
  | "consumption"
  | "gateway-proxy"
  | "api-gateway";

export type Topology = "single" | "cluster";

/** The NATS nodes of a local cluster; three is the smallest that survives losing one (quorum 2 of 3). */
export const CLUSTER_NATS_NODES = 3;

/**
 * Processes per service. On a cluster: three proxies (the edge that carries the traffic), two of
 * everything else, so losing one process of any service loses no function (one consumption
 * leads, the other stands by). Telemetry with chDB is one: chDB is an engine inside the
 * process, and its files may be opened by one process only; with ClickHouse (`CLICKHOUSE_URL`)
 * two share the work like the others.
 */
export function replicaCount(app: ServiceApp, topology: Topology, clickhouse: boolean): number {
  if (topology === "single") return 1;
  if (app === "gateway-proxy") return 3;
  if (app === "telemetry" && !clickhouse) return 1;
  return 2;
}

/** What `up` and the stack file call replica `index` (0-based) of `count`: `gateway-proxy#2`. */
export const replicaName = (app: string, index: number, count: number) =>
  count === 1 ? app : `${app}#${index + 1}`;

/**
 * The ports of `count` replicas listening from `base` upwards, skipping the ports other parts of
 * the stack were given (the demo upstream's 8091 sits right above the proxy's 8090).
 */
export function replicaPorts(base: number, count: number, taken: ReadonlySet<number>): number[] {
  const ports: number[] = [];
  for (let port = base; ports.length < count && port <= 65_535; port++) {
    if (!taken.has(port)) ports.push(port);
  }
  return ports;
}
