import { tracerOf } from "@agentnet/bus";
import { type Health, type HttpAnswer, type HttpRequest, healthResponse } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { answerProtectedResourceMetadata, PROTECTED_RESOURCE_PREFIX } from "../mcp/metadata";
import { handleMcp, mcpServerNameOf } from "../mcp/relay";
import { handleMcpUnion } from "../mcp/union";
import { matchListing, matchRoute, wireOfUnknownPath } from "../wires";
import { sendError } from "./errors";
import { handleModels } from "./models";
import { handleInference } from "./proxy";
import { traceInference } from "./tracing";

/** Inference requests being handled: a shutdown waits for them to publish their events. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    return work.finally(() => {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves once none is in flight, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      setTimeout(resolve, timeoutMs).unref();
    });
  }
}

/**
 * The proxy's routes; a small table rather than a framework: this is the hot path. Requests come
 * over HTTP/1.1 or HTTP/2 (`createDualHttpServer`), the same to everything behind.
 */
export function createRequestHandler(ctx: ProxyContext, health: Health, inFlight: InFlight) {
  const tracer = tracerOf(ctx.nc);
  return (req: HttpRequest, res: HttpAnswer): void => {
    const url = req.url ?? "/";
    const mark = url.indexOf("?");
    const path = mark === -1 ? url : url.slice(0, mark);
    const query = mark === -1 ? "" : url.slice(mark + 1);
    const route = matchRoute(path);
    const wire = route?.wire ?? wireOfUnknownPath(path, req.headers);
    const done = (error: unknown) => {
      // A client that hangs up while its body is read is not a proxy failure.
      if (req.destroyed && (error as { code?: string } | undefined)?.code === "ECONNRESET") return;
      ctx.logger.error({ err: error, path }, "request failed");
      if (!res.headersSent) sendError(res, wire, 500, "gateway.internal", "internal error");
      else res.destroy();
    };

    // The Responses API's WebSocket transport is not served: 426 makes Codex fall back to HTTP
    // streaming at once (other refusals make it retry five times first).
    if (req.headers.upgrade) {
      sendError(
        res,
        wire,
        426,
        "gateway.websocket_unsupported",
        `${path} is served over HTTP (POST, with "stream": true for streaming), not over a WebSocket`,
      );
      req.resume();
      return;
    }
    if (path === "/mcp" || path === "/mcp/") {
      inFlight.track(handleMcpUnion(ctx, req, res)).catch(done);
      return;
    }
    const mcpServer = mcpServerNameOf(path);
    if (mcpServer !== undefined) {
      inFlight.track(handleMcp(ctx, req, res, mcpServer)).catch(done);
      return;
    }
    const resource = path.startsWith(PROTECTED_RESOURCE_PREFIX)
      ? path.slice(PROTECTED_RESOURCE_PREFIX.length)
      : "";
    if (req.method === "GET" && (resource === "/mcp" || mcpServerNameOf(resource) !== undefined)) {
      answerProtectedResourceMetadata(
        req,
        res,
        path.slice(PROTECTED_RESOURCE_PREFIX.length),
        ctx.options.trustProxy,
      );
      return;
    }
    if (route && req.method === "POST") {
      ctx.metrics?.countAnswer(route.label, res);
      const handled = tracer
        ? traceInference(tracer, req, res, route, path, () =>
            handleInference(ctx, req, res, route, path, query),
          )
        : handleInference(ctx, req, res, route, path, query);
      inFlight.track(handled).catch(done);
      return;
    }
    const listing = req.method === "GET" ? matchListing(path, req.headers, query) : undefined;
    if (listing) {
      ctx.metrics?.countAnswer(listing.label, res);
      handleModels(ctx, req, res, listing, query).catch(done);
      return;
    }
    if (path === "/status" && req.method === "GET") {
      // Not behind auth, like /healthz: how the proxy's event pipeline and its providers are doing,
      // no data (provider ids and names, and why a provider cools down, are no secrets of a caller).
      res.writeHead(ctx.publisher.status().publishing ? 200 : 503, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          events: ctx.publisher.status(),
          admissions: ctx.admissions.status(),
          cooling_providers: ctx.routing.cooldowns.list(),
        }),
      );
      return;
    }
    const answer = req.method === "GET" ? healthResponse(health, path) : undefined;
    if (answer) {
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(answer.body);
      return;
    }
    sendError(res, wire, route ? 405 : 404, "gateway.not_found", `${req.method} ${path} is not served here`);
    req.resume();
  };
}
