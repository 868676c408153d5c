import type { Ledger } from "./ledger";
import type { Models } from "./models";

export interface RetentionOptions {
  /** Counters stay listed this long after their window ended, then are deleted. */
  counterRetentionMs: number;
  /**
   * Superseded ledger entries older than this are compacted away (each chain keeps its head). It
   * bounds idempotency: an op replayed later than this after it was first written could apply twice.
   */
  ledgerCompactionMs: number;
  /** Ended reservations and their outcomes are kept this long after expiry (late events need them). */
  reservationRetentionMs: number;
}

export interface PruneReport {
  counterEntries: number;
  compactedEntries: number;
  reservations: number;
}

/** Deletes what the retention options say is no longer needed; safe to run from every replica. */
export async function prune(
  models: Models,
  ledger: Ledger,
  nowMs: number,
  options: RetentionOptions,
): Promise<PruneReport> {
  const ended = await models.Ledger.deleteMany({
    window_end: { $lte: new Date(nowMs - options.counterRetentionMs) },
  });
  const compactedEntries = await compact(models, nowMs - options.ledgerCompactionMs);
  const horizon = new Date(nowMs - options.reservationRetentionMs);
  const stale = await models.Reservation.find({ finished: true, expires_at: { $lte: horizon } }, { _id: 1 })
    .limit(10_000)
    .lean<{ _id: string }[]>();
  const ids = stale.map((doc) => doc._id);
  if (ids.length > 0) {
    await models.Outcome.deleteMany({ reservation_id: { $in: ids } });
    await models.Reservation.deleteMany({ _id: { $in: ids } });
  }
  ledger.forget();
  return { counterEntries: ended.deletedCount, compactedEntries, reservations: ids.length };
}

/** Keeps, per chain, the newest entry older than `before` and everything newer; deletes the rest. */
async function compact(models: Models, before: number): Promise<number> {
  const old = await models.Ledger.find({ at: { $lt: new Date(before) } }, { chain: 1, seq: 1 })
    .limit(50_000)
    .lean<{ chain: string; seq: number }[]>();
  const newestOld = new Map<string, number>();
  for (const entry of old) newestOld.set(entry.chain, Math.max(newestOld.get(entry.chain) ?? 0, entry.seq));
  let deleted = 0;
  for (const [chain, seq] of newestOld) {
    // seq 1 stays: its absence is how a reader knows a chain is empty without a scan.
    deleted += (await models.Ledger.deleteMany({ chain, seq: { $lt: seq, $gt: 1 } })).deletedCount;
  }
  return deleted;
}

/** agn.account.deleted: the account's counters, reservations and outcomes go. */
export async function deleteAccountData(models: Models, ledger: Ledger, accountId: string) {
  await Promise.all([
    models.Ledger.deleteMany({ account_id: accountId }),
    models.Reservation.deleteMany({ account_id: accountId }),
    models.Outcome.deleteMany({ account_id: accountId }),
  ]);
  ledger.forget((chain) => chain.startsWith(`${accountId}|`));
}
