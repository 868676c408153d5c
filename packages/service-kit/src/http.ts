import { createServer, type RequestListener, type Server, type ServerOptions } from "node:http";
import type { Server as NetServer } from "node:net";
import type { Logger } from "./logger";

/** A client's request id is kept only when it is short and plain: it is echoed and logged. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's `x-request-id` when it is safe to echo and log, else undefined (generate one). */
export const clientRequestId = (header: string | string[] | undefined): string | undefined =>
  typeof header === "string" && SAFE_REQUEST_ID.test(header) ? header : undefined;

/** What one client may hold of a server: time to send its request, idle time, connections. */
export interface HttpServerLimits {
  /** Until a request's headers are in (slowloris). */
  headersTimeoutMs: number;
  /** Until the whole request, body included, is in; the answer (a long stream) is not bound by it. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; one more is closed as soon as it is accepted. */
  maxConnections: number;
}

export const DEFAULT_HTTP_SERVER_LIMITS: HttpServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 4_096,
};

/**
 * How often node looks for requests past their header or request timeout. Its default, 30 s, let a
 * client that stopped sending keep its socket up to 30 s beyond either bound.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Connections refused at the cap are reported at most this often, with how many there were. */
const DROP_REPORT_INTERVAL_MS = 10_000;

/** node's HTTP/1.1 server settings for `limits`. */
export const http1ServerOptions = (limits: HttpServerLimits): ServerOptions => ({
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
});

/**
 * The HTTP server of every service that listens for clients (api-gateway, gateway proxy): bounded
 * time to send a request, bounded idle keep-alive, a connection cap, and `nosniff` on every answer
 * so no browser takes a JSON error for a script or a page. The gateway proxy's speaks HTTP/2 too
 * (`createDualHttpServer`).
 */
export function createHttpServer(handler: RequestListener, limits: HttpServerLimits, logger: Logger): Server {
  const server = createServer(http1ServerOptions(limits), (req, res) => {
    res.setHeader("x-content-type-options", "nosniff");
    handler(req, res);
  });
  server.maxConnections = limits.maxConnections;
  reportDrops(server, limits, logger);
  return server;
}

/** Logs connections refused at the cap, at most every 10 s with how many there were. */
export function reportDrops(server: NetServer, limits: HttpServerLimits, logger: Logger): void {
  let dropped = 0;
  let reportedAt = 0;
  server.on("drop", () => {
    dropped++;
    const now = Date.now();
    if (now - reportedAt < DROP_REPORT_INTERVAL_MS) return;
    logger.warn(
      { dropped, max_connections: limits.maxConnections },
      "connections refused: the server holds as many as HTTP_MAX_CONNECTIONS allows",
    );
    reportedAt = now;
    dropped = 0;
  });
}
