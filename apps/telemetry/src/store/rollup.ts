import type { Warehouse } from "@agentnet/clickhouse";
import type { GatewayRequestEvent } from "@agentnet/contracts";
import { z } from "zod";
import { OUTCOME_SUMS, USAGE_COLUMNS, USAGE_SUMS } from "./entries";
import { ChNumber, defineQuery } from "./query";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The progress marks' name: every rollup advances together. */
const ROLLUP = "hourly";
/** An hour is rolled this long after it ended: events of the hour are then mostly in. */
const ROLL_GRACE_MS = 10 * 60_000;

/** A usage rollup: usage_events summed per account, hour and `dimensions`, with the outcomes. */
function usageRollup(table: string, dimensions: string[]): string {
  const keys = ["account_id", "hour", ...dimensions].join(", ");
  return `INSERT INTO ${table} (${keys}, ${USAGE_COLUMNS}, requests, errors, denied, latency_ms, computed_at)
  SELECT ${["account_id", "toStartOfHour(timestamp) AS hour", ...dimensions].join(", ")},
    ${USAGE_SUMS}, ${OUTCOME_SUMS}, now64(6) AS computed_at
  FROM usage_events FINAL
  WHERE {where}
  GROUP BY ${keys}`;
}

/*
 * usage_hourly, usage_hourly_totals and access_log_hourly are built from their tables read FINAL,
 * one whole (account, hour) at a time, never summed from inserts: a redelivered event is
 * collapsed by FINAL before it is counted, and the newest computation of an hour replaces the
 * older ones (ReplacingMergeTree(computed_at)). Two marks in rollup_progress keep reads exact
 * (infra/clickhouse/004_rollups.sql):
 * - the roll claims hours (`claimed`) before it reads them and marks them `done` after writing;
 *   reads take hours before `done` from the rollups and everything else from the events;
 * - an ingest batch that wrote events into hours before `claimed` (read after its insert)
 *   recomputes those hours before it acks. Either the roll's read began after the insert and saw
 *   the events, or the claim was there before the insert ended and the ingest recomputes.
 * computed_at is `now64()` at the start of a computation, before its read: a later computation
 * read later, so the newest one has seen every insert that finished before it.
 */
const ROLLUPS = [
  usageRollup("usage_hourly", ["user_id", "resolved_provider_id", "model", "group_ids"]),
  usageRollup("usage_hourly_totals", []),
  `INSERT INTO access_log_hourly
  SELECT account_id, toStartOfHour(timestamp) AS hour, count() AS entries,
    countIf(session_id = '') AS singletons, now64(6) AS computed_at
  FROM access_logs FINAL
  WHERE {where}
  GROUP BY account_id, hour`,
];

/** Recomputes every rollup for the rows `where` selects (whole hours). */
async function computeHours(warehouse: Warehouse, where: string, params: Record<string, unknown>) {
  for (const rollup of ROLLUPS) await warehouse.command(rollup.replace("{where}", where), params);
}

const ACCOUNT_HOURS = `account_id = {account:String}
  AND timestamp >= {from:DateTime64(3)} AND timestamp < {to:DateTime64(3)}
  AND has({hours:Array(UInt32)}, toUInt32(intDiv(toUnixTimestamp(timestamp), 3600)))`;

/** Recomputes some hours (as hour numbers since 1970) of one account. */
export async function recomputeAccountHours(warehouse: Warehouse, account: string, hours: number[]) {
  if (hours.length === 0) return;
  await computeHours(warehouse, ACCOUNT_HOURS, {
    account,
    from: new Date(Math.min(...hours) * HOUR_MS),
    to: new Date((Math.max(...hours) + 1) * HOUR_MS),
    hours,
  });
}

/**
 * The `done` mark inside a query, for reads that take rolled hours from a rollup and the rest
 * from the events; binds `{rollup}` (`ROLLED_BINDS`).
 */
export const ROLLED_UNTIL = "(SELECT max(done) FROM rollup_progress WHERE rollup = {rollup:String})";
export const ROLLED_BINDS = { rollup: ROLLUP };

/** Both marks as Unix seconds; 0 (1970) when the roll never ran. */
const rollupProgress = defineQuery({
  name: "rollup_progress",
  params: z.object({ rollup: z.string() }),
  row: z.object({ claimed: ChNumber, done: ChNumber }),
  sql: () => `
    SELECT toUnixTimestamp(max(claimed)) AS claimed, toUnixTimestamp(max(done)) AS done
    FROM rollup_progress WHERE rollup = {rollup:String}`,
  bind: ({ rollup }) => ({ rollup }),
});

/** Unix seconds of the oldest usage row, and how many rows there are (none: nothing to roll). */
const oldestUsage = defineQuery({
  name: "usage_oldest",
  params: z.object({}),
  row: z.object({ oldest: ChNumber, rows: ChNumber }),
  sql: () => "SELECT toUnixTimestamp(min(timestamp)) AS oldest, count() AS rows FROM usage_events",
  bind: () => ({}),
});

export type RollupProgress = { claimed: Date; done: Date };

/** How far the rollups are claimed and built. */
export async function readRollupProgress(warehouse: Warehouse): Promise<RollupProgress> {
  const [row] = await rollupProgress.run(warehouse, { rollup: ROLLUP });
  return { claimed: new Date((row?.claimed ?? 0) * 1000), done: new Date((row?.done ?? 0) * 1000) };
}

async function writeProgress(warehouse: Warehouse, claimed: Date, done: Date) {
  await warehouse.insert("rollup_progress", [{ rollup: ROLLUP, claimed, done }]);
}

const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * Rolls every account's hours that ended ROLL_GRACE_MS before `now` and are not rolled yet, a
 * day per statement to bound the engine's memory. Safe to run in several replicas at once.
 */
export async function rollHours(warehouse: Warehouse, now = new Date()): Promise<RollupProgress> {
  const target = floorHour(now.getTime() - ROLL_GRACE_MS);
  const progress = await readRollupProgress(warehouse);
  if (target <= progress.done.getTime()) return progress;
  await writeProgress(warehouse, new Date(target), progress.done);
  let from = progress.done.getTime();
  if (from === 0) {
    // First roll: from the oldest usage on (an empty table has nothing to roll).
    const [oldest] = await oldestUsage.run(warehouse, {});
    from = oldest === undefined || oldest.rows === 0 ? target : floorHour(oldest.oldest * 1000);
  }
  for (; from < target; from += DAY_MS) {
    await computeHours(warehouse, "timestamp >= {from:DateTime64(3)} AND timestamp < {to:DateTime64(3)}", {
      from: new Date(from),
      to: new Date(Math.min(from + DAY_MS, target)),
    });
  }
  const rolled = { claimed: new Date(target), done: new Date(target) };
  await writeProgress(warehouse, rolled.claimed, rolled.done);
  return rolled;
}

/**
 * After a batch is inserted: recomputes the rolled (claimed) hours it wrote into, so a late or
 * redelivered event is in the rollups before the batch is acked. Live traffic writes into hours
 * not claimed yet, and this reads one small row.
 */
export async function refreshRolledHours(warehouse: Warehouse, events: readonly GatewayRequestEvent[]) {
  const { claimed } = await readRollupProgress(warehouse);
  const hoursByAccount = new Map<string, Set<number>>();
  for (const event of events) {
    const hour = floorHour(Date.parse(event.timestamp));
    if (hour >= claimed.getTime()) continue;
    const hours = hoursByAccount.get(event.account_id) ?? new Set<number>();
    hours.add(hour / HOUR_MS);
    hoursByAccount.set(event.account_id, hours);
  }
  for (const [account, hours] of hoursByAccount) await recomputeAccountHours(warehouse, account, [...hours]);
}
