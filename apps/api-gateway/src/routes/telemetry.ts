import type { NatsConnection } from "@agentnet/bus";
import {
  AccessLogQuery,
  AccessLogSessionQuery,
  type Endpoint,
  Telemetry,
  UsageBreakdownQuery,
  UsageQuery,
} from "@agentnet/contracts";
import { Router } from "express";
import { mount, param, type RouteSpec } from "../http/route";

/**
 * Spec endpoints 1-3 (access logs, sessions, usage overview) and, beyond the spec, one entry by id
 * (docs/API.md, "Prompt previews") and the usage series and breakdown (docs/API.md, "Usage
 * analytics"). Open to every member: a caller without the account-wide grant is scoped to their
 * own requests by telemetry, not refused here (another's entry is a 404). A malformed query
 * (page_size over 100, unknown sort_by or by, bad date) is a ZodError, so 400.
 */
export function telemetryRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);

  add({
    method: "get",
    path: "/agent-network/access-logs",
    summary: "List access-log entries, filtered, sorted and paged",
    access: "member",
    endpoint: Telemetry.accessLogs,
    toRequest: (req, caller) => ({ caller, query: AccessLogQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/access-logs/:logId",
    summary: "Get one access-log entry, its prompt and completion whole (beyond the spec)",
    access: "member",
    endpoint: Telemetry.accessLog,
    toRequest: (req, caller) => ({ caller, log_id: param(req, "logId") }),
  });
  add({
    method: "get",
    path: "/agent-network/access-log-sessions",
    summary: "List sessions of access-log entries, filtered, sorted and paged",
    access: "member",
    endpoint: Telemetry.sessions,
    toRequest: (req, caller) => ({ caller, query: AccessLogSessionQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/usage/overview",
    summary: "Token and cost usage per time bucket",
    access: "member",
    endpoint: Telemetry.usageOverview,
    toRequest: (req, caller) => ({ caller, query: UsageQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/usage/series",
    summary: "Requests, errors, denials, latency, tokens and cost per time bucket (beyond the spec)",
    access: "member",
    endpoint: Telemetry.usageSeries,
    toRequest: (req, caller) => ({ caller, query: UsageQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/agent-network/usage/breakdown",
    summary: "Requests, tokens and cost by user, group, model or provider, by cost (beyond the spec)",
    access: "member",
    endpoint: Telemetry.usageBreakdown,
    toRequest: (req, caller) => ({ caller, query: UsageBreakdownQuery.parse(req.query) }),
  });
  return router;
}
