import { lookup } from "node:dns";
import type { LookupFunction } from "node:net";
import { buildConnector, Pool } from "undici";
import { isPrivateAddress } from "../domain/private-address";

export interface UpstreamOptions {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Refuse upstreams that are, or resolve to, private, loopback or link-local addresses. */
  refusePrivate: boolean;
}

/** An upstream refused because it is, or resolves to, a private address (AGN_REFUSE_PRIVATE_UPSTREAMS). */
export class PrivateUpstreamError extends Error {
  override readonly name = "PrivateUpstreamError";
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} is the private address ${address}`);
  }
}

/**
 * Resolves as `dns.lookup` does and fails if any address is private. Checked when the socket
 * connects, on the addresses it connects to, so a name that resolves differently later (DNS
 * rebinding) cannot slip past a check made earlier.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0);
    const refused = addresses.find((entry) => isPrivateAddress(entry.address));
    if (refused) return callback(new PrivateUpstreamError(hostname, refused.address), "", 0);
    if (options.all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
    const [first] = addresses;
    return callback(null, first?.address ?? "", first?.family ?? 4);
  });
};

/** Connects as undici does; with `refusePrivate`, never to a private address, literal or resolved. */
function upstreamConnector(skipTlsVerification: boolean, refusePrivate: boolean): buildConnector.connector {
  const connect = buildConnector({
    ...(skipTlsVerification ? { rejectUnauthorized: false } : {}),
    ...(refusePrivate ? { lookup: publicOnlyLookup } : {}),
  });
  if (!refusePrivate) return connect;
  return (options, callback) => {
    // An IP literal is connected to without a lookup: check it here.
    if (isPrivateAddress(options.hostname)) {
      callback(new PrivateUpstreamError(options.hostname, options.hostname), null);
      return;
    }
    connect(options, callback);
  };
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

  constructor(private readonly options: UpstreamOptions) {}

  get(origin: string, skipTlsVerification: boolean): Pool {
    const key = `${skipTlsVerification ? "insecure" : "verified"} ${origin}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        keepAliveTimeout: 30_000,
        headersTimeout: this.options.headersTimeoutMs,
        bodyTimeout: this.options.bodyTimeoutMs,
        connect: upstreamConnector(skipTlsVerification, this.options.refusePrivate),
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

/** The private-upstream refusal behind a failed request, however deep undici wrapped it. */
export function privateUpstreamOf(error: unknown): PrivateUpstreamError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof PrivateUpstreamError) return cause;
    cause = cause.cause;
  }
  return undefined;
}
