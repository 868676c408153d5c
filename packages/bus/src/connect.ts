import { readFileSync } from "node:fs";
import { type BusService, inboxPrefix } from "@agentnet/contracts";
import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
} from "@nats-io/transport-node";

/** How a service proves who it is to NATS: a user and password, or a decentralized-auth creds file. */
export type BusAuth = { user: string; password: string } | { credsFile: string } | undefined;

export interface BusOptions {
  url: string;
  /** Which service connects: its inbox prefix (the one its permissions allow) and its connection name. */
  service: BusService;
  auth?: BusAuth;
  /** A CA certificate (PEM file) to verify the server's TLS certificate with; TLS is required when set. */
  tlsCaFile?: string;
  /** How long to wait for a first connection (ms). */
  timeoutMs?: number;
}

/** The connection options of `options`: credentials, TLS and the service's private inbox prefix. */
export function busConnectionOptions(options: BusOptions): ConnectionOptions {
  const auth = options.auth;
  return {
    servers: options.url,
    name: options.service,
    inboxPrefix: inboxPrefix(options.service),
    ...(auth && "user" in auth ? { user: auth.user, pass: auth.password } : {}),
    ...(auth && "credsFile" in auth
      ? { authenticator: credsAuthenticator(new Uint8Array(readFileSync(auth.credsFile))) }
      : {}),
    ...(options.tlsCaFile ? { tls: { caFile: options.tlsCaFile } } : {}),
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
 * Connects and keeps reconnecting forever: a service outlives a NATS restart, and a NATS that
 * stops answering counts as lost (`BUS_PING_INTERVAL_MS`).
 */
export function connectBus(options: BusOptions): Promise<NatsConnection> {
  return connect({
    ...busConnectionOptions(options),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: BUS_PING_INTERVAL_MS,
    maxPingOut: BUS_MAX_PINGS_OUT,
    // Async stack traces cost an Error per request/publish (~5 % of the proxy's CPU under load);
    // our errors carry the subject, which is what a trace would have told.
    noAsyncTraces: true,
  });
}

/** The NATS settings every service reads (`baseEnv` of service-kit). */
export interface BusEnv {
  NATS_URL: string;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
  NATS_CREDS?: string | undefined;
  NATS_CA?: string | undefined;
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
  };
}
