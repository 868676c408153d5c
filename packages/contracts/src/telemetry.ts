import { z } from "zod";
import {
  AccessLogEntryView,
  AccessLogPage,
  AccessLogQuery,
  AccessLogSessionPage,
  AccessLogSessionQuery,
} from "./access-logs";
import { Id, Timestamp } from "./common";
import { byCaller, endpoint } from "./subjects";
import { UsageBreakdown, UsageBreakdownQuery, UsageOverview, UsageQuery, UsageSeries } from "./usage";

/**
 * Telemetry reads. Each carries the caller: telemetry scopes a caller without the account-wide
 * grant to their own requests, overriding any user_id or group_id filter they sent.
 */
export const Telemetry = {
  accessLogs: endpoint("agn.telemetry.access_logs", byCaller({ query: AccessLogQuery }), AccessLogPage),
  /** Not in the spec: one entry with its texts whole, where the lists carry previews. */
  accessLog: endpoint("agn.telemetry.access_log", byCaller({ log_id: Id }), AccessLogEntryView),
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

/** Request events a proxy may have published before its ack was lost, longer ago than the stream's duplicate window. */
export const StoredRequestsQuery = z.object({
  requests: z
    .array(z.object({ account_id: Id, id: Id, timestamp: Timestamp }))
    .min(1)
    .max(1_000),
});
export const StoredRequestsReply = z.object({
  /** False while telemetry has not ingested everything the stream held when asked: ask again. */
  decided: z.boolean(),
  /** The ids among those asked about that the stream delivered. */
  stored: z.array(Id),
});

/**
 * Asked by proxies, never by callers: telemetry keeps every request id for as long as the
 * account lives, so it can tell whether an event stored long ago would be stored again.
 */
export const TelemetryIngest = {
  storedRequests: endpoint("agn.telemetry.stored_requests", StoredRequestsQuery, StoredRequestsReply),
} as const;
