import type { Server } from "node:http";

/** A client's request id is kept only when it is short and plain: it is echoed and logged. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `x-request-id` when it is safe to echo and log, else undefined (generate one). */
export const clientRequestId = (header: string | string[] | undefined): string | undefined =>
  typeof header === "string" && SAFE_REQUEST_ID.test(header) ? header : undefined;

export interface HttpTimeouts {
  /** Until the request's headers are in (slowloris). */
  headersTimeoutMs: number;
  /** Until the whole request, body included, is in; responses (streams) are not bound by it. */
  requestTimeoutMs: number;
}

/** Bounds how long a client may take to send a request, so dribbling clients cannot hold sockets. */
export function applyHttpTimeouts(server: Server, timeouts: HttpTimeouts): void {
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
}
