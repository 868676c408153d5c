import type { Warehouse } from "@agentnet/clickhouse";
import type { GatewayRequestEvent } from "@agentnet/contracts";
import { ACCESS_LOG_LINE_COLUMNS, toAccessLogLine, toUsageLine, USAGE_LINE_COLUMNS } from "../domain/rows";

export const ACCESS_LOGS = "access_logs";
/** Filled from access_logs by a materialized view (infra/clickhouse/005_log_read_paths.sql). */
export const ACCESS_LOGS_BY_USER = "access_logs_by_user";
export const USAGE_EVENTS = "usage_events";
/**
 * Each session's last activity: `access_log_session_keys` (012), which the count reads, and
 * `access_log_sessions` (004), still filled while replicas of the version before 012 may read it.
 * Retention and account deletion keep both.
 */
export const SESSION_TABLES = ["access_log_session_keys", "access_log_sessions"] as const;

/**
 * Writes one batch of events: a usage row for each, an access-log row for the logged ones. No
 * dedup token: a redelivered batch is composed differently from the original, so a block token
 * would not match; both tables are ReplacingMergeTrees keyed by request id instead, and reads
 * count each id once. The two inserts run concurrently (the engine parses and writes them on its
 * own threads); resolves when both are in parts, i.e. when acking is safe.
 */
export async function insertEvents(warehouse: Warehouse, events: readonly GatewayRequestEvent[]) {
  const usage = new Array<string>(events.length);
  const accessLogs: string[] = [];
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    if (event === undefined) continue;
    usage[i] = toUsageLine(event);
    const line = toAccessLogLine(event);
    if (line !== undefined) accessLogs.push(line);
  }
  await Promise.all([
    warehouse.insertJSONLines(USAGE_EVENTS, usage, { columns: USAGE_LINE_COLUMNS }),
    warehouse.insertJSONLines(ACCESS_LOGS, accessLogs, { columns: ACCESS_LOG_LINE_COLUMNS }),
  ]);
}

/** Account deletion: the account's access logs and its usage go (spec: all its resources). */
export async function deleteAccountRows(warehouse: Warehouse, accountId: string) {
  for (const table of [
    ACCESS_LOGS,
    ACCESS_LOGS_BY_USER,
    USAGE_EVENTS,
    "usage_hourly",
    "usage_hourly_totals",
    "access_log_hourly",
    ...SESSION_TABLES,
  ]) {
    await warehouse.command("ALTER TABLE {table:Identifier} DELETE WHERE account_id = {account:String}", {
      table,
      account: accountId,
    });
  }
}
