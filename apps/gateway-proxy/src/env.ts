import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import {
  baseEnv,
  envBoolean,
  envCheckedList,
  envLowercaseList,
  envPort,
  httpServerEnv,
  leaseOutageEnv,
  parseEnvWith,
  requestStreamEnv,
} from "@agentnet/service-kit";
import { z } from "zod";

const privateUpstreamList = envCheckedList((entries) => parsePrivateUpstreamAllowance(entries).problems);

export const GatewayProxyEnv = z.object({
  ...baseEnv,
  ...requestStreamEnv,
  ...httpServerEnv,
  AGN_PROXY_HOST: z.string().default("127.0.0.1"),
  AGN_PROXY_PORT: envPort.default(8090),
  /**
   * Proxy processes sharing the port (`node:cluster`), each a proxy of its own: one per core uses
   * the host, at a cost under a cap when NATS is lost (docs/DEPLOY.md, "Every core of a proxy's machine").
   */
  AGN_PROXY_WORKERS: z.coerce.number().int().min(1).max(256).default(1),
  /** 32 random bytes, base64: opens the provider credentials the control-plane sealed. */
  AGN_SEALING_KEY: z.string({ error: "AGN_SEALING_KEY is required (openssl rand -base64 32)" }).min(1),
  /** Endpoints this proxy always announces in its heartbeat, on top of the ones it served lately. */
  AGN_PROXY_ENDPOINTS: envLowercaseList,
  /** Take the client address from X-Forwarded-For (only behind a load balancer you trust). */
  AGN_TRUST_PROXY: envBoolean.default(false),
  AGN_PROXY_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Waiting for the upstream's response headers (a slow first token counts here). */
  AGN_UPSTREAM_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(300_000),
  /** Longest silence between two body chunks of the upstream's response. */
  AGN_UPSTREAM_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(300_000),
  /**
   * Requests in flight to one upstream origin at most, and the connections of its pool (over
   * HTTP/1.1 each request has one of its own; over HTTP/2 one carries up to 100). A connection is
   * a file descriptor: at start the proxy logs its limit and warns when this bound and
   * HTTP_MAX_CONNECTIONS do not fit in it.
   */
  AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: z.coerce.number().int().min(1).default(4_096),
  /**
   * How long a request past that bound waits for a slot; then it goes to another candidate provider,
   * or is answered 503 (Anthropic's wire: 529) with retry-after.
   */
  AGN_UPSTREAM_WAIT_MS: z.coerce.number().int().min(0).default(5_000),
  /** Offer HTTP/2 to upstreams over TLS (ALPN): vendors that speak it carry many streams on one connection. */
  AGN_UPSTREAM_HTTP2: envBoolean.default(true),
  /**
   * Refuse upstreams that are, or resolve to, a non-public address (loopback, private, link-local,
   * CGNAT, unspecified, ...): an account admin's upstream_url must not reach this host or its
   * network. `false` turns the check off (a deployment whose account admins are its operators).
   */
  AGN_REFUSE_PRIVATE_UPSTREAMS: envBoolean.default(true),
  /**
   * Private upstreams allowed anyway (self-hosted models), comma-separated: ranges (`10.0.0.0/8`),
   * addresses (`10.1.2.3`), `address:port` (`127.0.0.1:8091`, `[::1]:8000`) and `name:port`
   * (`llm.lan:8000`).
   */
  AGN_ALLOWED_PRIVATE_UPSTREAMS: privateUpstreamList,
  /** Events kept in memory while NATS is unavailable; beyond it the oldest are dropped. */
  /** How often the proxy says it is alive (consumption takes it for dead after three silent beats). */
  AGN_PROXY_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).default(10),
  AGN_EVENT_BUFFER_MAX: z.coerce.number().int().min(1).default(50_000),
  /**
   * How long a resolved token is served without asking the control-plane again. Revocations reach
   * the cache at once over the bus; this bounds one that never arrived (a connection that stalled).
   */
  AGN_AUTH_CACHE_MS: z.coerce.number().int().min(0).default(5_000),
  AGN_SNAPSHOT_MAX_AGE_MS: z.coerce.number().int().min(0).default(60_000),
  /** On SIGTERM, how long requests in flight (streams) may finish before they are cut and charged. */
  AGN_SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * How long known callers and accounts are served from their last good answer while the
   * control-plane cannot answer (revocations made meanwhile apply when it answers again).
   */
  AGN_STALE_SERVE_SECONDS: z.coerce.number().int().min(0).default(600),
  /** How long a request waits for the consumption leader when its leases of cap headroom lack room. */
  AGN_LEASE_TIMEOUT_MS: z.coerce.number().int().min(50).default(2_000),
  /** A lease of cap headroom unused this long gives back what it has not committed. */
  AGN_LEASE_IDLE_MS: z.coerce.number().int().min(100).default(2_000),
  /**
   * A provider that failed this many times (a status or error a request is retried on) within
   * AGN_COOLDOWN_WINDOW_MS is tried last for AGN_COOLDOWN_MS, then probed by one request; a 429
   * whose retry-after is at least AGN_COOLDOWN_MS cools it for the retry-after. Per proxy process.
   */
  AGN_COOLDOWN_FAILURES: z.coerce.number().int().min(1).default(3),
  AGN_COOLDOWN_WINDOW_MS: z.coerce.number().int().min(100).default(30_000),
  AGN_COOLDOWN_MS: z.coerce.number().int().min(100).default(30_000),
  ...leaseOutageEnv,
});
export type GatewayProxyEnv = z.infer<typeof GatewayProxyEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): GatewayProxyEnv => parseEnvWith(GatewayProxyEnv, source);
