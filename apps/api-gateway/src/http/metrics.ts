import type { MetricsRegistry } from "@agentnet/service-kit";
import type { RequestHandler } from "express";
import { Counter, Histogram } from "prom-client";
import { routePatternOf } from "./route-pattern";

/** The route label of a request no route matched (a static file of the dashboard, a 404, a 401 before routing). */
const UNMATCHED = "unmatched";

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

/**
 * Counts and times every API answer by route pattern (`routePatternOf`, with `keepMountPath` on the
 * API router), method and status, once it is sent.
 */
export function countRequests(registry: MetricsRegistry): RequestHandler {
  const requests = new Counter({
    name: "agentnet_api_http_requests_total",
    help: "API requests by route pattern, method and status",
    labelNames: ["route", "method", "code"],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: "agentnet_api_http_request_duration_seconds",
    help: "From receiving an API request to its answer being sent, by route pattern and method",
    labelNames: ["route", "method"],
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  return (req, res, next) => {
    const started = performance.now();
    res.once("close", () => {
      const route = routePatternOf(req, res) ?? UNMATCHED;
      requests.inc({ route, method: req.method, code: String(res.statusCode) });
      seconds.observe({ route, method: req.method }, (performance.now() - started) / 1000);
    });
    next();
  };
}
