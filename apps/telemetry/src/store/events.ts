import type { Warehouse } from "@agentnet/clickhouse";
import type { GatewayRequestEvent } from "@agentnet/contracts";
import { toAccessLogRow, toUsageRow } from "../domain/rows";

export const ACCESS_LOGS = "access_logs";
export const USAGE_EVENTS = "usage_events";

/**
 * Writes one batch of events: a usage row for each, an access-log row for the logged ones. No
 * dedup token: a redelivered batch is composed differently from the original, so a block token
 * would not match; both tables are ReplacingMergeTrees keyed by request id instead, and reads
 * count each id once. Resolves when both inserts are in parts, i.e. when acking is safe.
 */
export async function insertEvents(warehouse: Warehouse, events: readonly GatewayRequestEvent[]) {
  const accessLogs: Record<string, unknown>[] = [];
  for (const event of events) {
    const row = toAccessLogRow(event);
    if (row !== undefined) accessLogs.push(row);
  }
  await warehouse.insert(USAGE_EVENTS, events.map(toUsageRow));
  await warehouse.insert(ACCESS_LOGS, accessLogs);
}

/** Account deletion: the account's access logs and its usage go (spec: all its resources). */
export async function deleteAccountRows(warehouse: Warehouse, accountId: string) {
  for (const table of [ACCESS_LOGS, USAGE_EVENTS]) {
    await warehouse.command("ALTER TABLE {table:Identifier} DELETE WHERE account_id = {account:String}", {
      table,
      account: accountId,
    });
  }
}
