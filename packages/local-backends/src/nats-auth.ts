import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { BUS_SERVICES, type BusService, busPermissions, OPERATOR_INBOX_PREFIX } from "@agentnet/contracts";

/** One NATS user per service (see `busPermissions`), each with its own password. */
export type BusCredentials = Record<BusService, string>;

/** A user with every permission: tests and benchmarks drive the bus as an operator would. */
export interface OperatorUser {
  user: string;
  password: string;
}

export const generateBusCredentials = (): BusCredentials =>
  Object.fromEntries(
    BUS_SERVICES.map((service) => [service, randomBytes(24).toString("base64url")]),
  ) as BusCredentials;

/**
 * The local stack's bus credentials: generated once into `file` (mode 0600, like the sealing
 * key) and read from there afterwards, so a restarted stack reconnects to the same server.
 */
export function localBusCredentials(file: string): BusCredentials {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(generateBusCredentials(), null, 2)}\n`, { mode: 0o600 });
  }
  const stored = JSON.parse(readFileSync(file, "utf8")) as Partial<BusCredentials>;
  const missing = BUS_SERVICES.filter((service) => typeof stored[service] !== "string");
  if (missing.length === 0) return stored as BusCredentials;
  // A service added since the file was written gets its password now; the others keep theirs.
  const completed = { ...generateBusCredentials(), ...stored } as BusCredentials;
  writeFileSync(file, `${JSON.stringify(completed, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return completed;
}

/** How a node joins a cluster: its route listener, the routes to the other nodes, the route login. */
export interface NatsClusterOptions {
  /** The cluster's name, the same on every node. */
  name: string;
  /** Where this node listens for routes from the others. */
  host: string;
  port: number;
  /** The other nodes' route listeners (`nats://host:6222`); this node's own may be listed too. */
  routes: string[];
  /** The login every node asks of a route, and gives on its own routes: the same on every node. */
  user: string;
  password: string;
}

export interface NatsServerConfigOptions {
  host: string;
  port: number;
  /** JetStream's files: each node of a cluster has its own. */
  storeDir: string;
  /** The node's name, unique in its cluster (JetStream places replicas by it). */
  serverName?: string;
  cluster?: NatsClusterOptions;
  /** Each service's password, or a reference to an environment variable (`{ env: "NAME" }`). */
  passwords: Record<BusService, string | { env: string }>;
  operators?: OperatorUser[];
  /** Serve `/healthz` (and the monitoring pages) on this port, e.g. for a container health check. */
  monitorPort?: number;
  /** Serve Go's pprof on this port (`/debug/pprof/profile`). */
  profPort?: number;
}

/** The environment variable holding `service`'s password in the compose setup. */
export const composePasswordVariable = (service: BusService) =>
  `NATS_PASSWORD_${service.toUpperCase().replaceAll("-", "_")}`;

/**
 * A nats-server configuration (JSON, which its parser reads) with JetStream and one user per service
 * holding only that service's permissions. Passwords given as `{ env }` are left to the server to
 * read from its environment (the compose file's form).
 */
export function natsServerConfig(options: NatsServerConfigOptions): string {
  const password = (value: string | { env: string }) =>
    typeof value === "string" ? JSON.stringify(value) : `$${value.env}`;
  // Operators (tests, benchmarks) call services too, from the default inbox prefix.
  const operatorInboxes = (options.operators ?? []).length > 0 ? [`${OPERATOR_INBOX_PREFIX}.>`] : [];
  const services = BUS_SERVICES.map((service) => {
    const { publish, subscribe } = busPermissions(service);
    const allowed = [...publish, ...operatorInboxes];
    // An empty allow list would allow everything: a service that publishes nothing is denied all.
    const permissions = {
      publish: allowed.length > 0 ? { allow: allowed } : { deny: [">"] },
      subscribe: { allow: subscribe },
    };
    return `    { user: ${JSON.stringify(service)}, password: ${password(options.passwords[service])}, permissions: ${JSON.stringify(permissions)} }`;
  });
  const operators = (options.operators ?? []).map(
    (operator) =>
      `    { user: ${JSON.stringify(operator.user)}, password: ${JSON.stringify(operator.password)} }`,
  );
  return [
    "# Generated from packages/contracts/src/bus-access.ts: every service has its own user and only its subjects.",
    `listen: ${JSON.stringify(`${options.host}:${options.port}`)}`,
    // A client that answers no PING for ~3 s is disconnected and its subscriptions dropped (the
    // default is 2 min x 2). The server skips PINGs to a client it keeps delivering to, so a frozen
    // member of a busy queue group goes only once its deliveries back up.
    'ping_interval: "1s"',
    "ping_max: 3",
    ...(options.monitorPort === undefined ? [] : [`http_port: ${options.monitorPort}`]),
    ...(options.profPort === undefined ? [] : [`prof_port: ${options.profPort}`]),
    ...(options.serverName === undefined ? [] : [`server_name: ${JSON.stringify(options.serverName)}`]),
    ...(options.cluster === undefined ? [] : [clusterBlock(options.cluster)]),
    `jetstream: { store_dir: ${JSON.stringify(options.storeDir)} }`,
    "authorization: {",
    "  users: [",
    [...services, ...operators].join(",\n"),
    "  ]",
    "}",
    "",
  ].join("\n");
}

/** The `cluster {}` block: routes carry the route login in their URLs, which is how nats-server sends it. */
function clusterBlock(cluster: NatsClusterOptions): string {
  const routes = cluster.routes.map((route) => {
    const url = new URL(route);
    url.username = encodeURIComponent(cluster.user);
    url.password = encodeURIComponent(cluster.password);
    return url.toString();
  });
  const block = {
    name: cluster.name,
    listen: `${cluster.host}:${cluster.port}`,
    routes,
    authorization: { user: cluster.user, password: cluster.password },
  };
  return `cluster: ${JSON.stringify(block)}`;
}

/** Writes `config` where only this user can read it (it holds passwords). */
export function writeNatsServerConfig(file: string, config: string) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, config, { mode: 0o600 });
  chmodSync(file, 0o600);
}
