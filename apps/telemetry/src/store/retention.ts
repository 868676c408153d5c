import type { Warehouse } from "@agentnet/clickhouse";
import { z } from "zod";
import type { DayPartition } from "../domain/retention";
import { ACCESS_LOGS, ACCESS_LOGS_BY_USER, SESSION_TABLES } from "./events";
import { defineQuery } from "./query";
import { recomputeAccountHours } from "./rollup";

/**
 * Daily partitions of access_logs that begin before `before` (no account's rows are younger than
 * its cutoff there), with the accounts holding rows in each. Reads only account_id and the
 * partition's virtual column, so it stays cheap enough to run hourly.
 */
export const oldPartitions = defineQuery({
  name: "access_log_old_partitions",
  params: z.object({ before: z.date() }),
  row: z.object({ partition: z.string().regex(/^\d{8}$/), accounts: z.array(z.string()) }),
  sql: () => `
    SELECT _partition_id AS partition, groupUniqArray(account_id) AS accounts
    FROM access_logs WHERE timestamp < {before:DateTime64(3)}
    GROUP BY partition ORDER BY partition`,
  bind: ({ before }) => ({ before }),
});

export async function listOldPartitions(warehouse: Warehouse, before: Date): Promise<DayPartition[]> {
  return oldPartitions.run(warehouse, { before });
}

/**
 * Drops a whole day: no rewrite, the files go; access_log_hourly and access_logs_by_user have the
 * same day partitions.
 */
export async function dropPartition(warehouse: Warehouse, partition: string) {
  for (const table of [ACCESS_LOGS, ACCESS_LOGS_BY_USER, "access_log_hourly"]) {
    await warehouse.command("ALTER TABLE {table:Identifier} DROP PARTITION ID {partition:String}", {
      table,
      partition,
    });
  }
}

/**
 * Row-wise delete of one account's expired rows, for days shared with accounts that keep theirs.
 * Its access_log_hourly rows go up to the hour the cutoff falls in, which is then recomputed from
 * what is left of it (a recomputation alone would keep an hour that has no row left).
 */
export async function deleteAccessLogsBefore(warehouse: Warehouse, accountId: string, before: Date) {
  for (const table of [ACCESS_LOGS, ACCESS_LOGS_BY_USER]) {
    await warehouse.command(
      "ALTER TABLE {table:Identifier} DELETE WHERE account_id = {account:String} AND timestamp < {before:DateTime64(3)}",
      { table, account: accountId, before },
    );
  }
  await warehouse.command(
    "ALTER TABLE access_log_hourly DELETE WHERE account_id = {account:String} AND hour <= toStartOfHour({before:DateTime64(3)})",
    { account: accountId, before },
  );
  await recomputeAccountHours(warehouse, accountId, [Math.floor(before.getTime() / 3_600_000)]);
}

/**
 * The session tables keep a session while any of its entries is kept: one whose last activity is
 * before the account's cutoff has no entry left. An unmerged older row of a session that goes on
 * is removed too, which changes nothing (its newer row holds the later last activity).
 */
export async function deleteSessionsEndedBefore(warehouse: Warehouse, accountId: string, before: Date) {
  for (const table of SESSION_TABLES) {
    await warehouse.command(
      "ALTER TABLE {table:Identifier} DELETE WHERE account_id = {account:String} AND ended_at < {before:DateTime64(3)}",
      { table, account: accountId, before },
    );
  }
}
