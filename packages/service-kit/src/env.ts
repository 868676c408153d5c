import { z } from "zod";
import { DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from "./http";
import { tracingEnv } from "./tracing-env";

/** "true"/"false" (and 1/0, yes/no) as a real boolean: `Boolean("false")` is true, which is never wanted. */
export const envBoolean = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes");

export const envPort = z.coerce.number().int().min(0).max(65_535);

/** A comma-separated list of names or addresses: items trimmed and lowercased, empty ones dropped. */
export const envLowercaseList = z
  .string()
  .default("")
  .transform((text) =>
    text
      .split(",")
      .map((item) => item.trim().toLowerCase())
      .filter((item) => item !== ""),
  );

/** An `envLowercaseList` whose every problem `problemsOf` finds is a configuration error of its own. */
export const envCheckedList = (problemsOf: (entries: string[]) => readonly string[]) =>
  envLowercaseList.superRefine((entries, ctx) => {
    for (const problem of problemsOf(entries)) ctx.addIssue({ code: "custom", message: problem });
  });

export const LogLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

/** Settings of a service that listens for HTTP clients (see `createHttpServer`). */
export const httpServerEnv = {
  HTTP_HEADERS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(DEFAULT_HTTP_SERVER_LIMITS.headersTimeoutMs),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(DEFAULT_HTTP_SERVER_LIMITS.requestTimeoutMs),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(DEFAULT_HTTP_SERVER_LIMITS.keepAliveTimeoutMs),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(DEFAULT_HTTP_SERVER_LIMITS.maxConnections),
};

/** The limits `httpServerEnv` sets. */
export const httpServerLimits = (env: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
  HTTP_MAX_CONNECTIONS: number;
}): HttpServerLimits => ({
  headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
  requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  maxConnections: env.HTTP_MAX_CONNECTIONS,
});

/**
 * Settings of the services that ensure the request stream (gateway proxy, telemetry, consumption):
 * they must agree, or each start would set its own. Unset, the default of `ensureRequestStream`.
 */
export const requestStreamEnv = {
  AGN_REQUESTS_STREAM_MAX_BYTES: z.coerce.number().int().min(1_048_576).optional(),
  /** The stream's duplicate window, and how long consumption remembers settled event ids. */
  AGN_REQUESTS_DEDUP_SECONDS: z.coerce.number().min(1).optional(),
};

/** The request stream's limits the environment sets (the rest keep `ensureRequestStream`'s defaults). */
export const requestStreamLimits = (env: {
  AGN_REQUESTS_STREAM_MAX_BYTES?: number | undefined;
  AGN_REQUESTS_DEDUP_SECONDS?: number | undefined;
}): { maxBytes?: number; duplicateWindowMs?: number } => ({
  ...(env.AGN_REQUESTS_STREAM_MAX_BYTES ? { maxBytes: env.AGN_REQUESTS_STREAM_MAX_BYTES } : {}),
  ...(env.AGN_REQUESTS_DEDUP_SECONDS ? { duplicateWindowMs: env.AGN_REQUESTS_DEDUP_SECONDS * 1000 } : {}),
});

/**
 * How long leases of cap headroom live on through a bus outage (gateway proxy and consumption):
 * the proxy keeps using a lease that long after the leader last confirmed it while NATS is gone,
 * and the leader holds every lease that long when it loses NATS, so they must agree.
 */
export const leaseOutageEnv = {
  AGN_LEASE_OUTAGE_SECONDS: z.coerce.number().min(0).default(75),
};

/** Why one entry of a server list is not a NATS server's URL, or undefined when it is one. */
function natsServerProblem(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `"${entry}" is not a URL (nats://host:4222)`;
  }
  if (url.protocol !== "nats:" && url.protocol !== "tls:") {
    return `"${entry}" is not a nats:// or tls:// URL`;
  }
  if (url.hostname === "") return `"${entry}" names no host`;
  return undefined;
}

/**
 * One NATS server, or the nodes of a cluster comma-separated
 * (`nats://a:4222,nats://b:4222,nats://c:4222`): the connection fails over between them. Kept
 * as the text given (the bus splits it), so what a service logs is what the operator wrote.
 */
export const envNatsServers = z
  .string()
  .default("nats://127.0.0.1:4222")
  .superRefine((text, ctx) => {
    const entries = text.split(",").map((entry) => entry.trim());
    if (entries.every((entry) => entry === "")) {
      ctx.addIssue({ code: "custom", message: "names no server (nats://host:4222, comma-separated)" });
      return;
    }
    for (const entry of entries.filter((item) => item !== "")) {
      const problem = natsServerProblem(entry);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }
  });

/** Settings every service reads. */
export const baseEnv = {
  NATS_URL: envNatsServers,
  /**
   * How many NATS servers keep each stream and KV bucket (1..5; 3 on a three-node cluster, which
   * then loses nothing with one node down). A stream or bucket made with another count is brought
   * to this one at start, so every service of a deployment must be given the same.
   */
  AGN_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** The service's NATS user and password (the local stack generates them; see docs/ARCHITECTURE.md, "Who may use the bus"). */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /** Or a decentralized-auth credentials file (JWT and nkey seed), instead of user and password. */
  NATS_CREDS: z.string().min(1).optional(),
  /** A CA certificate (PEM) to verify the server's TLS certificate; TLS is required when set. */
  NATS_CA: z.string().min(1).optional(),
  LOG_LEVEL: LogLevel.default("info"),
  /** Port of the `/healthz` + `/readyz` listener; 0 picks a free one, unset disables it. */
  HEALTH_PORT: envPort.optional(),
  /**
   * Port of the listener serving `/metrics` in Prometheus' text format (and `/healthz`, `/readyz`);
   * 0 picks a free one. Unset, the service keeps no metrics at all (docs/OPERATIONS.md, "Metrics").
   */
  AGN_METRICS_PORT: envPort.optional(),
  /** Where that listener binds. It answers whoever reaches it: keep it off public networks. */
  AGN_METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  ...tracingEnv,
};

/**
 * Parses a service's environment once, at start. A bad value stops the service with a message
 * naming every offending variable instead of failing later somewhere else.
 */
export function parseEnvWith<T extends z.ZodType>(schema: T, source: NodeJS.ProcessEnv): z.output<T> {
  const parsed = schema.safeParse(source);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
    .join("\n");
  throw new Error(`invalid configuration:\n${problems}`);
}
