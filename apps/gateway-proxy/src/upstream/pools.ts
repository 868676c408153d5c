import { lookup } from "node:dns";
import type { LookupFunction } from "node:net";
import type { TLSSocket } from "node:tls";
import {
  type AddressClass,
  isIpLiteral,
  type PrivateUpstreamAllowance,
  parsePrivateUpstreamAllowance,
  privateUpstreamRefusal,
} from "@agentnet/gateway-rules";
import type { Logger } from "@agentnet/service-kit";
import { buildConnector, Client, Pool } from "undici";
import { OriginSlots } from "./origin-slots";

export interface UpstreamOptions {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /**
   * Requests in flight to one origin at most (AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN), and the pool's
   * connections: over HTTP/1.1 each request has a connection of its own.
   */
  connectionsPerOrigin: number;
  /** How long a request past that bound waits for a slot before it is refused (AGN_UPSTREAM_WAIT_MS). */
  waitMs: number;
  /** Offer HTTP/2 over TLS (ALPN); vendors that speak it carry many streams on one connection. */
  http2: boolean;
  /**
   * Private upstreams (loopback, private, link-local, CGNAT, ...) allowed anyway; undefined when
   * none is refused (AGN_REFUSE_PRIVATE_UPSTREAMS=false).
   */
  privateAllowance: PrivateUpstreamAllowance | undefined;
}

/** An upstream refused because it is, or resolves to, a private address (AGN_ALLOWED_PRIVATE_UPSTREAMS). */
export class PrivateUpstreamError extends Error {
  override readonly name = "PrivateUpstreamError";
  constructor(
    readonly host: string,
    readonly address: string,
    readonly cls: AddressClass,
  ) {
    super(`${host} is the ${cls} address ${address}`);
  }
}

/**
 * Resolves as `dns.lookup` does and fails unless every address may be connected to. Run by the
 * socket as it connects, and the socket connects to the addresses it returns: the addresses
 * checked are the ones connected to, so a name that resolves differently later (DNS rebinding)
 * cannot slip past a check made earlier.
 */
function checkedLookup(port: number, allowance: PrivateUpstreamAllowance): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      for (const { address } of addresses) {
        const cls = privateUpstreamRefusal({ host: hostname, port, address }, allowance);
        if (cls) return callback(new PrivateUpstreamError(hostname, address, cls), "", 0);
      }
      if (options.all)
        return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      const [first] = addresses;
      return callback(null, first?.address ?? "", first?.family ?? 4);
    });
  };
}

/**
 * Connects as undici does; with an allowance, only where it allows: an IP literal is checked here
 * (a socket connects to it without a lookup), a name by the lookup the socket connects through.
 */
function upstreamConnector(
  origin: URL,
  skipTlsVerification: boolean,
  allowance: PrivateUpstreamAllowance | undefined,
  http2: boolean,
): buildConnector.connector {
  const port = Number(origin.port) || (origin.protocol === "https:" ? 443 : 80);
  const connect = buildConnector({
    allowH2: http2,
    ...(skipTlsVerification ? { rejectUnauthorized: false } : {}),
    ...(allowance ? { lookup: checkedLookup(port, allowance) } : {}),
  });
  if (!allowance) return connect;
  return (options, callback) => {
    if (isIpLiteral(options.hostname)) {
      const address = options.hostname;
      const cls = privateUpstreamRefusal({ host: address, port, address }, allowance);
      if (cls) {
        callback(new PrivateUpstreamError(address, address, cls), null);
        return;
      }
    }
    connect(options, callback);
  };
}

/**
 * What the pools check upstream connections against: the allowance, or undefined when private
 * upstreams are not refused at all (AGN_REFUSE_PRIVATE_UPSTREAMS=false, said loudly at start).
 */
export function privateAllowanceOf(
  refuse: boolean,
  allowed: readonly string[],
  logger: Logger,
): PrivateUpstreamAllowance | undefined {
  if (!refuse) {
    logger.warn(
      "private upstreams are not refused (AGN_REFUSE_PRIVATE_UPSTREAMS=false): any account admin's upstream_url reaches this host and its network",
    );
    return undefined;
  }
  const { allowance, problems } = parsePrivateUpstreamAllowance(allowed);
  if (problems.length > 0) throw new Error(`AGN_ALLOWED_PRIVATE_UPSTREAMS: ${problems.join("; ")}`);
  return allowance;
}

/**
 * Streams one HTTP/2 connection carries at most: what servers allow at least (RFC 9113 asks for no
 * fewer than 100; nginx allows 128), so a stream seldom waits for the server's leave on a connection.
 */
const H2_STREAMS_PER_CONNECTION = 100;

/** One upstream origin (in one TLS mode): its pool, the slots of its requests, its host for metrics and logs. */
export interface Upstream {
  pool: Pool;
  slots: OriginSlots;
  /**
   * Streams of bridged MCP HTTP+SSE sessions (mcp/sse-bridge.ts) open at once: at most half the
   * pool's connections, so the messages those sessions post always find one free.
   */
  bridgedStreams: OriginSlots;
  host: string;
  /** When the bound was last logged, and what happened at it since (logged at most every few seconds). */
  bound: { loggedAt: number; waited: number; refused: number };
}

/**
 * One keep-alive pool per upstream origin (and TLS mode): connections are reused across requests
 * and accounts. `skip_tls_verification` gets a pool of its own, so a provider that turned
 * verification off never lends an unverified socket to one that did not.
 */
export class UpstreamPools {
  private readonly upstreams = new Map<string, Upstream>();

  constructor(private readonly options: UpstreamOptions) {}

  /** How long a request past an origin's bound waits for a slot. */
  get waitMs(): number {
    return this.options.waitMs;
  }

  get connectionsPerOrigin(): number {
    return this.options.connectionsPerOrigin;
  }

  /** How long the proxy waits for an upstream's next bytes. */
  get bodyTimeoutMs(): number {
    return this.options.bodyTimeoutMs;
  }

  get(origin: string, skipTlsVerification: boolean): Upstream {
    const key = `${skipTlsVerification ? "insecure" : "verified"} ${origin}`;
    let upstream = this.upstreams.get(key);
    if (!upstream) {
      const url = new URL(origin);
      upstream = {
        pool: this.pool(url, skipTlsVerification),
        slots: new OriginSlots(this.options.connectionsPerOrigin),
        bridgedStreams: new OriginSlots(Math.max(1, Math.floor(this.options.connectionsPerOrigin / 2))),
        host: url.host,
        bound: { loggedAt: 0, waited: 0, refused: 0 },
      };
      this.upstreams.set(key, upstream);
    }
    return upstream;
  }

  /** Every origin reached so far. */
  list(): IterableIterator<Upstream> {
    return this.upstreams.values();
  }

  async close(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map(({ pool }) => pool.close()));
    this.upstreams.clear();
  }

  /**
   * A connection carries one request at a time over HTTP/1.1 (pipelining would queue a stream
   * behind another), and up to `H2_STREAMS_PER_CONNECTION` once the vendor chose HTTP/2: undici
   * keeps a client's pipelining at 1 unless told, whatever its protocol.
   */
  private pool(origin: URL, skipTlsVerification: boolean): Pool {
    const { http2, privateAllowance, headersTimeoutMs, bodyTimeoutMs, connectionsPerOrigin } = this.options;
    const connect = upstreamConnector(origin, skipTlsVerification, privateAllowance, http2);
    return new Pool(origin, {
      connections: connectionsPerOrigin,
      factory: (url) => {
        let negotiatedH2 = false;
        const client = new Client(url, {
          allowH2: http2,
          maxConcurrentStreams: H2_STREAMS_PER_CONNECTION,
          keepAliveTimeout: 30_000,
          headersTimeout: headersTimeoutMs,
          bodyTimeout: bodyTimeoutMs,
          connect: (options, callback) =>
            connect(options, (...connected) => {
              negotiatedH2 = (connected[1] as TLSSocket | null)?.alpnProtocol === "h2";
              callback(...connected);
            }),
        });
        client.on("connect", () => {
          client.pipelining = negotiatedH2 ? H2_STREAMS_PER_CONNECTION : 1;
        });
        return client;
      },
    });
  }
}

/**
 * Where a request goes: the provider's upstream_url origin, its path prefix, then the request's
 * path. A prefix ending in `/v1` (https://api.openai.com/v1) stands for the request's `/v1`, so
 * both `https://api.openai.com` and `https://api.openai.com/v1` reach `/v1/chat/completions`; any
 * other prefix is kept in front (`http://host/openai` → `/openai/v1/chat/completions`). The
 * provider's query string comes first (Azure's api-version lives there), then what the route
 * forwards of the request's (`forwardedQuery`).
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
