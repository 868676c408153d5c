import { z } from "zod";
import { AccessLogPage, AccessLogQuery, AccessLogSessionPage, AccessLogSessionQuery } from "./access-logs";
import { byCaller, endpoint } from "./subjects";
import { UsageBreakdown, UsageBreakdownQuery, UsageOverview, UsageQuery, UsageSeries } from "./usage";

/**
 * Telemetry reads. Each carries the caller: telemetry scopes a caller without the account-wide
 * grant to their own requests, overriding any user_id or group_id filter they sent.
 */
export const Telemetry = {
  accessLogs: endpoint("agn.telemetry.access_logs", byCaller({ query: AccessLogQuery }), AccessLogPage),
  sessions: endpoint(
    "agn.telemetry.sessions",
    byCaller({ query: AccessLogSessionQuery }),
    AccessLogSessionPage,
  ),
  usageOverview: endpoint("agn.telemetry.usage_overview", byCaller({ query: UsageQuery }), UsageOverview),
  /** Not in the spec: requests, outcomes, latency, tokens and cost per time bucket. */
  usageSeries: endpoint("agn.telemetry.usage_series", byCaller({ query: UsageQuery }), UsageSeries),
  /** Not in the spec: requests, tokens and cost per user, group, model or provider. */
  usageBreakdown: endpoint(
    "agn.telemetry.usage_breakdown",
    byCaller({ query: UsageBreakdownQuery }),
    UsageBreakdown,
  ),
} as const;

export const TelemetryQueryPayload = z.object({});
