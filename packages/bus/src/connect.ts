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

/** Connects and keeps reconnecting forever: a service outlives a NATS restart. */
export function connectBus(options: BusOptions): Promise<NatsConnection> {
  return connect({
    ...busConnectionOptions(options),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
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
