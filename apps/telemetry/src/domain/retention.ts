import { DEFAULT_SETTINGS } from "@agentnet/contracts";

const DAY_MS = 86_400_000;

/** One daily partition of access_logs and the accounts holding rows in it. */
export interface DayPartition {
  /** Partition id, `YYYYMMDD` (UTC). */
  partition: string;
  accounts: string[];
}

export interface RetentionPlan {
  /** Whole days every holder is past its retention for: dropped, not rewritten. */
  dropPartitions: string[];
  /** Accounts with expired rows in a partition that must stay: deleted row-wise before `before`. */
  deletes: { account_id: string; before: Date }[];
  /** Every account that loses rows, by either way: its sessions that ended before `before` go. */
  sessions: { account_id: string; before: Date }[];
}

/**
 * The instant before which an account's access-log rows are expired, or undefined when the
 * account keeps rows forever (retention 0 or less, spec). An account the control-plane does not
 * list has no settings record, and its settings read as the defaults, so the default applies.
 */
export function retentionCutoff(retentionDays: number | undefined, now: Date): Date | undefined {
  const days = retentionDays ?? DEFAULT_SETTINGS.access_log_retention_days;
  if (days <= 0) return undefined;
  return new Date(now.getTime() - days * DAY_MS);
}

const partitionStart = (partition: string): number =>
  Date.UTC(Number(partition.slice(0, 4)), Number(partition.slice(4, 6)) - 1, Number(partition.slice(6, 8)));

/**
 * Spec: access-log rows older than the account's access_log_retention_days are swept. A day is
 * dropped as a partition when it ended before every holder's cutoff; otherwise each holder whose
 * cutoff falls after the day began gets one row-wise delete (one per account, not per day).
 */
export function planRetention(
  partitions: DayPartition[],
  retentionDays: ReadonlyMap<string, number>,
  now: Date,
): RetentionPlan {
  const dropPartitions: string[] = [];
  const deletes = new Map<string, Date>();
  const sessions = new Map<string, Date>();
  for (const { partition, accounts } of partitions) {
    const start = partitionStart(partition);
    const cutoffs = accounts.map((account) => ({
      account,
      cutoff: retentionCutoff(retentionDays.get(account), now),
    }));
    for (const { account, cutoff } of cutoffs) {
      if (cutoff !== undefined && start < cutoff.getTime()) sessions.set(account, cutoff);
    }
    const wholeDayExpired = cutoffs.every(
      ({ cutoff }) => cutoff !== undefined && start + DAY_MS <= cutoff.getTime(),
    );
    if (wholeDayExpired) {
      dropPartitions.push(partition);
      continue;
    }
    for (const { account, cutoff } of cutoffs) {
      if (cutoff !== undefined && start < cutoff.getTime()) deletes.set(account, cutoff);
    }
  }
  return {
    dropPartitions,
    deletes: [...deletes].map(([account_id, before]) => ({ account_id, before })),
    sessions: [...sessions].map(([account_id, before]) => ({ account_id, before })),
  };
}

/**
 * How far back the sweep looks: the cutoff of the shortest retention (the default included, for
 * accounts not listed). Rows younger than it are kept for every account.
 */
export function sweepHorizon(retentionDays: ReadonlyMap<string, number>, now: Date): Date | undefined {
  const positive = [...retentionDays.values(), DEFAULT_SETTINGS.access_log_retention_days].filter(
    (days) => days > 0,
  );
  return retentionCutoff(Math.min(...positive), now);
}
