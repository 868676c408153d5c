import type { LookupFunction } from "node:net";
import type { Readable } from "node:stream";
import { rootCertificates } from "node:tls";
import { isIpLiteral } from "@agentnet/gateway-rules";
import { Agent, request } from "undici";
import { type DialFailure, isTlsErrorCode } from "../domain/outcomes";
import type { ResolvedAddress } from "./resolve";

/** Where to dial: the name (for SNI, the Host header and the certificate check) and the pinned IP. */
export interface PinnedTarget {
  host: string;
  port: number;
  resolved: ResolvedAddress;
}

export interface DialSettings {
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCa?: readonly string[];
  maxBodyBytes: number;
  timeoutMs: number;
}

/**
 * An HTTPS agent that can only reach the address resolved (and classified) beforehand: its
 * lookup ignores the name and answers with that address, so DNS cannot change between the check
 * and the dial. Certificates are always verified, against the hostname.
 */
export function pinnedAgent(target: PinnedTarget, settings: DialSettings): Agent {
  const { address, family } = target.resolved;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return new Agent({
    connect: {
      lookup,
      // SNI carries names only (RFC 6066); for an IP literal the certificate must name the IP.
      ...(isIpLiteral(target.host) ? {} : { servername: target.host }),
      rejectUnauthorized: true,
      timeout: settings.timeoutMs,
      ...(settings.extraCa && settings.extraCa.length > 0
        ? { ca: [...rootCertificates, ...settings.extraCa] }
        : {}),
    },
    connections: 1,
  });
}

export type FetchResult =
  | { ok: true; status: number; body: unknown }
  /** A non-2xx answer; its body is never read (vendors echo credentials into error bodies). */
  | { ok: true; status: number; body?: undefined }
  | { ok: false; failure: DialFailure };

/**
 * The most specific `code` of an error: undici wraps system errors (ECONNREFUSED, a TLS code)
 * in its own, and a dual-stack connect can fail with an AggregateError of several.
 */
export function errorCodeOf(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  const inner =
    error instanceof AggregateError
      ? error.errors.map((e) => errorCodeOf(e, depth + 1)).find((code) => code !== undefined)
      : errorCodeOf(error.cause, depth + 1);
  const own = "code" in error && typeof error.code === "string" ? error.code : undefined;
  return inner ?? own;
}

export const failureFor = (error: unknown, host: string): DialFailure => {
  const code = errorCodeOf(error) ?? "ECONNRESET";
  if (
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT"
  ) {
    return { kind: "timeout", host, timeoutMs: 0, phase: "response" };
  }
  if (isTlsErrorCode(code)) return { kind: "tls", host, code };
  return { kind: "unreachable", host, code };
};

/** Drops a body unread. The abort it causes is expected, so it must not surface as uncaught. */
export const discard = (body: Readable) => {
  body.on("error", () => undefined);
  body.destroy();
};

/** Reads at most `limit` bytes; beyond that the stream is dropped and undefined returned. */
export async function readCapped(body: Readable, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  body.on("error", () => undefined);
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop early destroys the stream, which closes the connection mid-body.
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** `host:port` as a URL carries it (an IPv6 host in brackets): what a signer signs as the Host. */
export const listingAuthority = ({ host, port }: Pick<PinnedTarget, "host" | "port">): string =>
  `${host.includes(":") ? `[${host}]` : host}:${port}`;

/**
 * GETs one listing page over HTTPS through a pinned agent. No redirect is followed (undici's
 * request does not follow them), the body is capped, and `signal` carries the check's deadline.
 */
export async function fetchListingPage(
  agent: Agent,
  target: PinnedTarget,
  path: string,
  headers: Record<string, string>,
  settings: DialSettings,
  signal: AbortSignal,
): Promise<FetchResult> {
  const { host } = target;
  const timeout = (): FetchResult => ({
    ok: false,
    failure: { kind: "timeout", host, timeoutMs: settings.timeoutMs, phase: "response" },
  });
  try {
    const response = await request(`https://${listingAuthority(target)}${path}`, {
      method: "GET",
      headers,
      dispatcher: agent,
      signal,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      return { ok: true, status: response.statusCode };
    }
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > settings.maxBodyBytes) {
      discard(response.body);
      return { ok: false, failure: { kind: "too_large", host, limitBytes: settings.maxBodyBytes } };
    }
    const text = await readCapped(response.body, settings.maxBodyBytes);
    if (text === undefined) {
      return { ok: false, failure: { kind: "too_large", host, limitBytes: settings.maxBodyBytes } };
    }
    try {
      return { ok: true, status: response.statusCode, body: JSON.parse(text) };
    } catch {
      return { ok: false, failure: { kind: "not_json", host } };
    }
  } catch (error) {
    if (signal.aborted) return timeout();
    const failure = failureFor(error, host);
    return failure.kind === "timeout" ? timeout() : { ok: false, failure };
  }
}
