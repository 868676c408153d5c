import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { type NatsConnection, tracerOf } from "@agentnet/bus";
import {
  clientRequestId,
  type Health,
  healthResponse,
  type Logger,
  type MetricsRegistry,
} from "@agentnet/service-kit";
import express, { type Express } from "express";
import { authenticate } from "./http/auth";
import { dashboardRoutes } from "./http/dashboard";
import { errorMiddleware, notFoundRoute } from "./http/errors";
import { countRequests } from "./http/metrics";
import { jsonOnly } from "./http/negotiation";
import { openApiDocument } from "./http/openapi";
import { publicAuthRateLimit } from "./http/rate-limit";
import { routesOf } from "./http/route";
import { keepMountPath } from "./http/route-pattern";
import { traceRequests } from "./http/tracing";
import {
  AGENT_AUTH_OPERATIONS,
  agentCredentialAuthRoutes,
  agentCredentialRoutes,
} from "./routes/agent-credentials";
import { agentNetworkRoutes } from "./routes/agent-network";
import { auditRoutes } from "./routes/audit";
import { consumptionRoutes } from "./routes/consumption";
import { identityRoutes } from "./routes/identity";
import { notificationRoutes } from "./routes/notifications";
import { SIGN_IN_OPERATIONS, signInPublicRoutes, signInRoutes } from "./routes/sign-in";
import { telemetryRoutes } from "./routes/telemetry";

export interface ApiGatewayOptions {
  nc: NatsConnection;
  logger: Logger;
  health: Health;
  authCacheTtlMs: number;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  /** Requests a minute one client address may make to the public auth endpoints; 0: unbounded. */
  authRateLimitPerMinute: number;
  /** Whether the client address (`req.ip`, in audit entries and rate limits) comes from `X-Forwarded-For`. */
  trustProxy: boolean;
  /** Built dashboard (apps/dashboard/dist): served for GETs outside /api, with an SPA fallback. */
  dashboardDir?: string;
  /** The service's metrics registry; undefined counts nothing. */
  metrics?: MetricsRegistry | undefined;
}

/** The API's version as the OpenAPI document states it. */
const API_VERSION = "1.0.0";

export function createApp(options: ApiGatewayOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // One hop: the address the load balancer in front appended to X-Forwarded-For, never one the
  // client wrote before it (as the gateway-proxy reads it with the same setting).
  app.set("trust proxy", options.trustProxy ? 1 : false);
  // Read where a request has no logger of its own (src/http/route.ts).
  app.locals.logger = options.logger;
  if (options.metrics) app.use(countRequests(options.metrics));
  const tracer = tracerOf(options.nc);
  if (tracer) app.use(traceRequests(tracer));
  // API answers hold account data, and a created token's answer the token in plain: no cache may
  // keep them. The dashboard's static files set their own caching (they hold no secret); `nosniff`
  // comes with every answer from the shared HTTP server (`createHttpServer`).
  app.use((_req, res, next) => {
    res.setHeader("cache-control", "no-store");
    next();
  });

  app.use((req, res, next) => {
    const requestId = clientRequestId(req.headers["x-request-id"]) ?? randomUUID();
    res.setHeader("x-request-id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      options.logger.debug(
        { request_id: requestId, method: req.method, path: req.path, status: res.statusCode, ms },
        "request",
      );
    });
    next();
  });

  app.get(["/healthz", "/readyz"], (req, res) => {
    const answer = healthResponse(options.health, req.path);
    res
      .status(answer?.status ?? 404)
      .type("application/json")
      .send(answer?.body);
  });

  const api = express.Router();
  if (tracer || options.metrics) api.use(keepMountPath);
  api.use(jsonOnly);
  const parseJson = express.json({
    limit: options.bodyLimitBytes,
    type: "application/json",
    strict: false,
    // Invalid UTF-8 would be stored as replacement characters: refuse it instead.
    verify: (_req, _res, buffer) => {
      if (!isUtf8(buffer)) throw new Error("invalid UTF-8");
    },
  });
  // An agent without a token yet asks for one here, and a browser signs in; everything after needs
  // a token or a session (and reads no body before it knows who sends it).
  const rateLimited = publicAuthRateLimit(options.authRateLimitPerMinute);
  api.use(agentCredentialAuthRoutes(options.nc, options.requestTimeoutMs, parseJson, rateLimited));
  api.use(signInPublicRoutes(options.nc, options.requestTimeoutMs, rateLimited));
  // Who is asking before anything is read: an unauthenticated client cannot make the gateway wait
  // for (or buffer) its body.
  api.use(authenticate(options.nc, options.authCacheTtlMs, options.logger));
  api.use(parseJson);
  const routers = [
    identityRoutes(options.nc, options.requestTimeoutMs),
    consumptionRoutes(options.nc, options.requestTimeoutMs),
    telemetryRoutes(options.nc, options.requestTimeoutMs),
    agentNetworkRoutes(options.nc, options.requestTimeoutMs),
    notificationRoutes(options.nc, options.requestTimeoutMs),
    auditRoutes(options.nc, options.requestTimeoutMs),
    agentCredentialRoutes(options.nc, options.requestTimeoutMs),
    signInRoutes(options.nc, options.requestTimeoutMs),
  ];
  for (const router of routers) api.use(router);
  // The API's description is public, like any published API reference; built once from the routes.
  const openApi = JSON.stringify(
    openApiDocument(
      routers.flatMap(routesOf),
      [...AGENT_AUTH_OPERATIONS, ...SIGN_IN_OPERATIONS],
      API_VERSION,
    ),
  );
  app.get("/api/openapi.json", (_req, res) => {
    res.type("application/json").send(openApi);
  });
  app.use("/api", api);

  if (options.dashboardDir) app.use(dashboardRoutes(options.dashboardDir));

  app.use(notFoundRoute);
  app.use(errorMiddleware(options.logger));
  return app;
}
