import type { NatsConnection } from "@agentnet/bus";
import {
  AccessLogQuery,
  AccessLogSessionQuery,
  type Endpoint,
  Telemetry,
  UsageQuery,
} from "@agentnet/contracts";
import { Router } from "express";
import { mount, type RouteSpec } from "../http/route";

/**
 * Spec endpoints 1-3: access logs, sessions, usage overview. Open to every member: a caller
 * without the account-wide grant is scoped to their own requests by telemetry, not refused here.
 * A malformed query (page_size over 100, unknown sort_by, bad date) is a ZodError, so 400.
 */
export function telemetryRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);

  add({
    method: "get",
    path: "/agent-network/access-logs",
    access: "member",
    endpoint: Telemetry.accessLogs,
    toRequest: (req, caller) => ({ caller, query: AccessLogQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/access-log-sessions",
    access: "member",
    endpoint: Telemetry.sessions,
    toRequest: (req, caller) => ({ caller, query: AccessLogSessionQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/usage/overview",
    access: "member",
    endpoint: Telemetry.usageOverview,
    toRequest: (req, caller) => ({ caller, query: UsageQuery.parse(req.query) }),
  });
  return router;
}
