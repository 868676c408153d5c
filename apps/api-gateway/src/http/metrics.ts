import type { MetricsRegistry } from "@agentnet/service-kit";
import type { Request, RequestHandler, Response } from "express";
import { Counter, Histogram } from "prom-client";

/** The route label of a request no route matched (a static file of the dashboard, a 404, a 401 before routing). */
const UNMATCHED = "unmatched";

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

/**
 * The route's pattern under the router it is mounted on (`/api/users/:userId`), never the URL: ids
 * in paths would make a series per resource. A router hands `req.baseUrl` back to its parent when
 * an error leaves it, so `markMountPath` keeps it where the error middleware's answer still finds it.
 */
function routeOf(req: Request, res: Response): string {
  const route: unknown = req.route;
  if (typeof route !== "object" || route === null || !("path" in route)) return UNMATCHED;
  const mount = typeof res.locals.mountPath === "string" ? res.locals.mountPath : req.baseUrl;
  // A route declared with several literal paths (`/healthz`, `/readyz`) is labelled with the one that matched.
  return typeof route.path === "string" ? `${mount}${route.path}` : req.path;
}

/** Remembers the mount path of the router it is used on, for `routeOf`. */
export const markMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};

/** Counts and times every API answer by route pattern, method and status, once it is sent. */
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
      const route = routeOf(req, res);
      requests.inc({ route, method: req.method, code: String(res.statusCode) });
      seconds.observe({ route, method: req.method }, (performance.now() - started) / 1000);
    });
    next();
  };
}
