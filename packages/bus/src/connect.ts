import { readFileSync } from "node:fs";
import { type BusService, inboxPrefix } from "@agentnet/contracts";
import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
  type ReconnectToServerHandler,
} from "@nats-io/transport-node";

/** How a service proves who it is to NATS: a user and password, or a decentralized-auth creds file. */
export type BusAuth = { user: string; password: string } | { credsFile: string } | undefined;

export interface BusOptions {
  /** One server, or several comma-separated (the nodes of a cluster): the connection fails over between them. */
  url: string;
  /** Which service connects: its inbox prefix (the one its permissions allow) and its connection name. */
  service: BusService;
  auth?: BusAuth;
  /** A CA certificate (PEM file) to verify the server's TLS certificate with; TLS is required when set. */
  tlsCaFile?: string;
  /** How long one attempt to connect to one server may take (ms); `BUS_DIAL_TIMEOUT_MS` by default. */
  timeoutMs?: number;
  /** How many servers keep each stream and KV bucket this connection creates (`AGN_STREAM_REPLICAS`). */
  streamReplicas?: number;
}

/** The servers `url` lists, comma-separated, blanks dropped. */
const busServers = (url: string): string[] =>
  url
    .split(",")
    .map((server) => server.trim())
    .filter((server) => server !== "");

/**
 * The connection options of `options`: credentials, TLS and the service's private inbox prefix.
 * TLS is required with a CA, or when a server is given as `tls://` (nats.js alone would speak
 * plain text to a server that offers no TLS); else it is used when the server asks for it.
 */
export function busConnectionOptions(options: BusOptions): ConnectionOptions {
  const auth = options.auth;
  const servers = busServers(options.url);
  return {
    servers,
    // The pool is the operator's list and nothing else. The addresses a cluster's nodes gossip are
    // the ones each sees on its own interfaces (a container's, every address of 0.0.0.0): a client
    // may not reach them, and one that drops packets costs a whole dial timeout in each failover.
    ignoreClusterUpdates: true,
    name: options.service,
    inboxPrefix: inboxPrefix(options.service),
    ...(auth && "user" in auth ? { user: auth.user, pass: auth.password } : {}),
    ...(auth && "credsFile" in auth
      ? { authenticator: credsAuthenticator(new Uint8Array(readFileSync(auth.credsFile))) }
      : {}),
    ...(options.tlsCaFile
      ? { tls: { caFile: options.tlsCaFile } }
      : servers.some((server) => server.startsWith("tls://"))
        ? { tls: {} }
        : {}),
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  };
}

/**
 * How often a connection PINGs its server, and how many PINGs may go unanswered: a server that
 * stops answering (frozen, a paused VM, a partition that leaves the socket open) is declared lost
 * 3 to 4 s after its last answer, as a closed connection is at once. The client then drops the
 * connection and reconnects, so services take the same path as for a restart (a `disconnect`
 * status, then `reconnect`). Three seconds of margin: a PING is a few bytes each way, queued behind
 * nothing but what the connection already sent, and a busy event loop reads the PONG one turn late
 * (under bench:proxy on a machine loaded five times over, the proxy's loop lagged 0.6 s at worst
 * and no PING went unanswered for a second), while a false verdict costs a reconnect and every
 * cache a reconnect distrusts.
 */
export const BUS_PING_INTERVAL_MS = 1_000;
export const BUS_MAX_PINGS_OUT = 3;

/**
 * How long one attempt to reach one server may take, from the TCP connect to the first PONG. A
 * frozen server (SIGSTOP, a paused VM) accepts the TCP connection and then says nothing: the
 * client moves to the next server of the list only after this (nats.js waits 20 s by default).
 * It is also the whole patience of a service's first connection to each server, at start on a
 * machine busy starting every other service: five seconds, where a handshake takes milliseconds.
 */
export const BUS_DIAL_TIMEOUT_MS = 5_000;

/**
 * Connects and keeps reconnecting forever: a service outlives a NATS restart, and a NATS that
 * stops answering counts as lost (`BUS_PING_INTERVAL_MS`). Given several servers, the first
 * connection goes to one of them at random (services spread over a cluster's nodes instead of all
 * loading the first), and a lost one is replaced by the next of the list that answers.
 */
export async function connectBus(options: BusOptions): Promise<NatsConnection> {
  const connectionOptions = busConnectionOptions(options);
  const nc = await connect({
    ...connectionOptions,
    timeout: options.timeoutMs ?? BUS_DIAL_TIMEOUT_MS,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: BUS_PING_INTERVAL_MS,
    maxPingOut: BUS_MAX_PINGS_OUT,
    reconnectToServer: dialAnotherServerFirst,
    // Async stack traces cost an Error per request/publish (~5 % of the proxy's CPU under load);
    // our errors carry the subject, which is what a trace would have told.
    noAsyncTraces: true,
  });
  // nats.js drops from its pool every server that failed the first connection: a node that was
  // down while this service started would never be tried again. The whole list goes back.
  const servers = busServers(options.url);
  if (servers.length > 1) nc.setServers(servers);
  if (options.streamReplicas !== undefined) replicasByConnection.set(nc, options.streamReplicas);
  return nc;
}

/**
 * Which server a reconnect dials. nats.js dials the server it has just lost first again: a server
 * that is frozen rather than gone then costs a whole `BUS_DIAL_TIMEOUT_MS` before the next one is
 * tried. The server dialed last (the one lost, or one that just failed) goes after the others:
 * the list is tried round, the lost server last.
 */
const dialAnotherServerFirst: ReconnectToServerHandler = (pool) => {
  const [next, other] = pool;
  if (!next || !other) return null;
  const latest = Math.max(...pool.map((server) => server.lastConnect));
  return latest > 0 && next.lastConnect === latest ? other : null;
};

/**
 * How many servers keep each stream and KV bucket created or updated over a connection (1 on a
 * single server, 3 on a three-node cluster), as `connectBus` was given it.
 */
const replicasByConnection = new WeakMap<NatsConnection, number>();

/** The replicas of streams and KV buckets made over `nc`; 1 unless `connectBus` was told otherwise. */
export const streamReplicasOf = (nc: NatsConnection): number => replicasByConnection.get(nc) ?? 1;

/** The NATS settings every service reads (`baseEnv` of service-kit). */
export interface BusEnv {
  NATS_URL: string;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
  NATS_CREDS?: string | undefined;
  NATS_CA?: string | undefined;
  AGN_STREAM_REPLICAS?: number | undefined;
}

/** Connection options for `service` from its environment; a user without a password is refused. */
export function busOptionsFromEnv(env: BusEnv, service: BusService): BusOptions {
  if (env.NATS_USER && !env.NATS_PASSWORD) throw new Error("NATS_USER is set without NATS_PASSWORD");
  if (env.NATS_CREDS && env.NATS_USER) throw new Error("set NATS_CREDS or NATS_USER/NATS_PASSWORD, not both");
  const auth: BusAuth = env.NATS_CREDS
    ? { credsFile: env.NATS_CREDS }
    : env.NATS_USER && env.NATS_PASSWORD
      ? { user: env.NATS_USER, password: env.NATS_PASSWORD }
      : undefined;
  return {
    url: env.NATS_URL,
    service,
    ...(auth ? { auth } : {}),
    ...(env.NATS_CA ? { tlsCaFile: env.NATS_CA } : {}),
    ...(env.AGN_STREAM_REPLICAS === undefined ? {} : { streamReplicas: env.AGN_STREAM_REPLICAS }),
  };
}
