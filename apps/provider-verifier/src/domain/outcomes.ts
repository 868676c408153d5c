import { AppError, unprocessable, VERIFY_REFUSALS } from "@agentnet/contracts";
import type { AddressClass } from "@agentnet/gateway-rules";

/**
 * How dialing a listing went wrong, as plain data: the dial layer reports it, these functions
 * decide which 422 the operator sees. Messages name the host and what happened, never the
 * credential and never the vendor's response body (vendors echo keys back in error bodies).
 */
export type DialFailure =
  | { kind: "unresolvable"; host: string; code: string }
  | { kind: "unreachable"; host: string; code: string }
  | { kind: "tls"; host: string; code: string }
  | { kind: "timeout"; host: string; timeoutMs: number; phase: "resolve" | "response" }
  | { kind: "too_large"; host: string; limitBytes: number }
  | { kind: "not_json"; host: string }
  | { kind: "bad_shape"; host: string; why: string };

export const TLS_HINT: Record<string, string> = {
  ERR_TLS_CERT_ALTNAME_INVALID: "the certificate does not name this host",
  CERT_HAS_EXPIRED: "the certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "the certificate chain ends in an untrusted self-signed root",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the certificate is not signed by a trusted authority",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the certificate is not signed by a trusted authority",
};

export const UNREACHABLE_HINT: Record<string, string> = {
  ECONNREFUSED: "refused the connection",
  ECONNRESET: "closed the connection",
  UND_ERR_SOCKET: "closed the connection",
  EHOSTUNREACH: "cannot be reached from here",
  ENETUNREACH: "cannot be reached from here",
};

/** Error codes of a failed TLS handshake or certificate check, as Node reports them. */
export const isTlsErrorCode = (code: string): boolean =>
  code in TLS_HINT || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code.includes("CERT");

export function refusalForFailure(failure: DialFailure): AppError {
  switch (failure.kind) {
    case "unresolvable":
      return unprocessable(
        VERIFY_REFUSALS.unresolvable,
        `the listing host ${failure.host} does not resolve (${failure.code})`,
      );
    case "unreachable":
      return unprocessable(
        VERIFY_REFUSALS.unreachable,
        `the listing host ${failure.host} ${UNREACHABLE_HINT[failure.code] ?? "did not answer"} (${failure.code})`,
      );
    case "tls":
      return unprocessable(
        VERIFY_REFUSALS.unreachable,
        `TLS with ${failure.host} failed: ${TLS_HINT[failure.code] ?? "the handshake or certificate check failed"} (${failure.code})`,
      );
    case "timeout":
      return unprocessable(
        VERIFY_REFUSALS.timeout,
        failure.phase === "resolve"
          ? `resolving ${failure.host} took longer than ${failure.timeoutMs} ms`
          : `the listing at ${failure.host} did not answer within ${failure.timeoutMs} ms`,
      );
    case "too_large":
      return unprocessable(
        VERIFY_REFUSALS.badResponse,
        `the listing at ${failure.host} sent more than ${failure.limitBytes} bytes; the response was cut off`,
      );
    case "not_json":
      return unprocessable(
        VERIFY_REFUSALS.badResponse,
        `the listing at ${failure.host} did not answer with JSON`,
      );
    case "bad_shape":
      return unprocessable(
        VERIFY_REFUSALS.badResponse,
        `the listing at ${failure.host} answered in an unexpected shape (${failure.why})`,
      );
  }
}

/**
 * The vendor's HTTP answer → a refusal, or undefined for 2xx (the body still has to parse).
 * 401/403 is the credential; 5xx an outage; 3xx is not followed, so a redirect to some other
 * host can never be used to reach it.
 */
export function refusalForStatus(status: number, host: string): AppError | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status === 401 || status === 403) {
    return unprocessable(
      VERIFY_REFUSALS.rejectedCredential,
      `the vendor rejected the credential (HTTP ${status})`,
    );
  }
  if (status >= 500) {
    return unprocessable(
      VERIFY_REFUSALS.vendorOutage,
      `the vendor's listing at ${host} is failing (HTTP ${status}); try again later`,
    );
  }
  if (status >= 300 && status < 400) {
    return unprocessable(
      VERIFY_REFUSALS.badResponse,
      `the listing at ${host} answered with a redirect (HTTP ${status}); redirects are not followed`,
    );
  }
  return unprocessable(
    VERIFY_REFUSALS.badResponse,
    `the listing at ${host} answered HTTP ${status}, not a model list`,
  );
}

/** Discovery has to dial, so an upstream it may not dial is a refusal rather than "unverified". */
export const privateAddressRefusal = (host: string, address: string, cls: AddressClass): AppError =>
  unprocessable(
    VERIFY_REFUSALS.unreachable,
    `${host} resolves to ${address}, a ${cls.replace("_", "-")} address that is not public; the verifier does not dial it`,
  );

/** Keys shorter than this are not scrubbed: replacing one or two characters would mangle messages. */
const SCRUB_MIN_LENGTH = 6;

/**
 * Last line of defence for "never echo the credential": messages are built without it, but if
 * one ever carried it (a key pasted into upstream_url's host, say) it is cut out before leaving.
 */
export function withoutCredential(error: unknown, apiKey: string): unknown {
  if (!(error instanceof AppError) || apiKey.length < SCRUB_MIN_LENGTH || !error.message.includes(apiKey)) {
    return error;
  }
  return new AppError(
    error.status,
    error.code,
    error.message.split(apiKey).join("[redacted]"),
    error.details,
  );
}
