import type { Warehouse } from "@agentnet/clickhouse";
import { z } from "zod";
import type { DayPartition } from "../domain/retention";
import { ACCESS_LOGS } from "./events";
import { defineQuery } from "./query";

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

/** Drops a whole day: no rewrite, the files go. */
export async function dropPartition(warehouse: Warehouse, partition: string) {
  await warehouse.command("ALTER TABLE {table:Identifier} DROP PARTITION ID {partition:String}", {
    table: ACCESS_LOGS,
    partition,
  });
}

/** Row-wise delete of one account's expired rows, for days shared with accounts that keep theirs. */
export async function deleteAccessLogsBefore(warehouse: Warehouse, accountId: string, before: Date) {
  await warehouse.command(
    "ALTER TABLE {table:Identifier} DELETE WHERE account_id = {account:String} AND timestamp < {before:DateTime64(3)}",
    { table: ACCESS_LOGS, account: accountId, before },
  );
}
