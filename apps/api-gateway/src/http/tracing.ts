import { clientTraceContext, endHttpSpan } from "@agentnet/service-kit";
import { context, SpanKind, type Tracer, trace } from "@opentelemetry/api";
import type { RequestHandler } from "express";
import { routePatternOf } from "./route-pattern";

/**
 * One SERVER span per API request, `HTTP <METHOD> <route>` (the route's pattern, so ids in paths
 * do not make a name per resource), continuing a client's `traceparent`. The span is the active
 * one while the request is handled, so its bus requests are its children; the request's stream is
 * bound to it too, since a body parser resumes from the stream's own events, outside any context.
 */
export function traceRequests(tracer: Tracer): RequestHandler {
  return (req, res, next) => {
    const parent = clientTraceContext(req.headers);
    const span = tracer.startSpan(
      `HTTP ${req.method}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": req.method, "url.path": req.path, "url.scheme": req.protocol },
      },
      parent,
    );
    res.once("close", () => {
      const route = routePatternOf(req, res);
      if (route) {
        span.updateName(`HTTP ${req.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      endHttpSpan(span, res.statusCode);
    });
    const active = trace.setSpan(parent, span);
    context.bind(active, req);
    context.with(active, next);
  };
}
