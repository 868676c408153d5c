import { Pool } from "undici";

export interface UpstreamTimeouts {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/** Connections per upstream origin: enough for a busy proxy, bounded so one vendor cannot take all sockets. */
const CONNECTIONS_PER_ORIGIN = 256;

/**
 * One keep-alive pool per upstream origin (and TLS mode): connections are reused across requests
 * and accounts. `skip_tls_verification` gets a pool of its own, so a provider that turned
 * verification off never lends an unverified socket to one that did not.
 */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly timeouts: UpstreamTimeouts) {}

  get(origin: string, skipTlsVerification: boolean): Pool {
    const key = `${skipTlsVerification ? "insecure" : "verified"} ${origin}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        keepAliveTimeout: 30_000,
        headersTimeout: this.timeouts.headersTimeoutMs,
        bodyTimeout: this.timeouts.bodyTimeoutMs,
        ...(skipTlsVerification ? { connect: { rejectUnauthorized: false } } : {}),
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
    this.pools.clear();
  }
}

/**
 * Where a request goes: the provider's upstream_url origin, its path prefix, then the request's
 * path. A prefix ending in `/v1` (https://api.openai.com/v1) stands for the request's `/v1`, so
 * both `https://api.openai.com` and `https://api.openai.com/v1` reach `/v1/chat/completions`; any
 * other prefix is kept in front (`http://host/openai` → `/openai/v1/chat/completions`). Query
 * strings of both are kept (Azure's api-version lives there).
 */
export function upstreamTarget(upstreamUrl: string, requestPath: string, requestQuery: string) {
  const base = parsedUpstream(upstreamUrl);
  const path =
    base.prefix.endsWith("/v1") && (requestPath === "/v1" || requestPath.startsWith("/v1/"))
      ? base.prefix + requestPath.slice(3)
      : base.prefix + requestPath;
  const query = [base.query, requestQuery].filter((part) => part !== "").join("&");
  return { origin: base.origin, host: base.host, path, pathWithQuery: query ? `${path}?${query}` : path };
}

/** Upstream URLs parsed once: `new URL` per request showed in the profile, and providers are few. */
const parsedUpstreams = new Map<string, { origin: string; host: string; prefix: string; query: string }>();
const MAX_PARSED_UPSTREAMS = 1_000;

function parsedUpstream(upstreamUrl: string) {
  let parsed = parsedUpstreams.get(upstreamUrl);
  if (!parsed) {
    const url = new URL(upstreamUrl);
    parsed = {
      origin: url.origin,
      host: url.host,
      prefix: url.pathname.replace(/\/+$/, ""),
      query: url.search.slice(1),
    };
    if (parsedUpstreams.size >= MAX_PARSED_UPSTREAMS) parsedUpstreams.clear();
    parsedUpstreams.set(upstreamUrl, parsed);
  }
  return parsed;
}
