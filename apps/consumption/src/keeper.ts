import type { GatewayRequestEvent, ReserveReply } from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import { type Counter, CounterBook, type ReserveInput } from "./domain/counter-book";
import type { JournalRef, UsageStore } from "./store/usage-store";

export interface KeeperOptions {
  reservationTtlMs: number;
  /** Counters stay listed this long after their window ended, then are pruned. */
  counterRetentionMs: number;
  /** How long a settled event id is remembered: longer than JetStream takes to redeliver an unacked event. */
  redeliveryHorizonMs: number;
  clock: () => number;
}

/**
 * The leader's consumption state: the counter book in memory, persisted through the usage store.
 * Reservations are decided in memory (synchronously, so check-and-hold is atomic); settled usage
 * is journaled before it is applied, so a crash loses at most holds, never counted usage. Writes
 * to the store run one at a time, in the order they were asked for.
 */
export class UsageKeeper {
  private lastSeq: number;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly book: CounterBook,
    private readonly store: UsageStore,
    private readonly options: KeeperOptions,
    nextSeq: number,
    /** The journal's entries, oldest first: the leader alone writes it, so it knows them all. */
    private readonly journal: JournalRef[],
  ) {
    this.lastSeq = nextSeq - 1;
  }

  /** Rebuilds the book from the store's snapshots and journal. */
  static async load(store: UsageStore, options: KeeperOptions): Promise<UsageKeeper> {
    const loaded = await store.load(endedBefore(options), options.redeliveryHorizonMs);
    const book = new CounterBook(newId, options.reservationTtlMs, options.redeliveryHorizonMs);
    for (const delta of loaded.deltas) book.addUsage(delta);
    // Loaded counters are already persisted as they are; only later changes need a snapshot.
    book.takeDirty();
    book.remember(loaded.recentEventIds, options.clock());
    return new UsageKeeper(book, store, options, loaded.nextSeq, loaded.journal);
  }

  reserve(input: ReserveInput): ReserveReply {
    return this.book.reserve(input, this.options.clock());
  }

  list(accountId: string, visible?: (counter: Counter) => boolean): Counter[] {
    return this.book.list(accountId, visible);
  }

  /** Settles a batch: journals its usage, then applies it. Rejects (nothing applied) if the journal write fails. */
  settle(events: GatewayRequestEvent[]): Promise<void> {
    return this.exclusive(async () => {
      const now = this.options.clock();
      const settlement = this.book.prepare(events, now);
      if (settlement.deltas.length > 0) {
        this.journal.push(
          await this.store.append(this.lastSeq + 1, settlement.eventIds, settlement.deltas, now),
        );
        this.lastSeq++;
      }
      this.book.commit(settlement, now);
    });
  }

  /** Frees holds past their expiry and forgets what no redelivery can need any more; returns how many holds. */
  sweepExpired(): number {
    const now = this.options.clock();
    this.book.forget(now);
    return this.book.expire(now);
  }

  /** Writes the changed counters' snapshots and trims the journal. */
  snapshot(): Promise<void> {
    return this.exclusive(() => this.writeSnapshot());
  }

  /** Drops counters whose window ended longer ago than the retention, in memory and in the store. */
  prune(): Promise<void> {
    return this.exclusive(async () => {
      const before = endedBefore(this.options);
      this.book.pruneEnded(before);
      await this.store.pruneEnded(before);
    });
  }

  /** agn.account.deleted: the account's counters go, in memory and in the store. */
  deleteAccount(accountId: string): Promise<void> {
    return this.exclusive(async () => {
      this.book.dropAccount(accountId);
      // The snapshot covers every journal entry so far: none above the watermark names the account.
      await this.writeSnapshot();
      await this.store.deleteAccount(accountId);
    });
  }

  /**
   * Snapshots the changed counters, then trims the journal entries the snapshot covers (all of
   * them: it is stamped with the last sequence) whose event ids are past the redelivery horizon.
   */
  private async writeSnapshot() {
    const changed = this.book.takeDirty();
    const now = this.options.clock();
    // As the book remembers event ids: while `at + horizon > now`.
    const kept = this.journal.findIndex((entry) => entry.at + this.options.redeliveryHorizonMs > now);
    const trimmed = this.journal.slice(0, kept === -1 ? this.journal.length : kept);
    try {
      await this.store.snapshot(changed, this.lastSeq, trimmed);
    } catch (error) {
      this.book.markDirty(changed);
      throw error;
    }
    this.journal.splice(0, trimmed.length);
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

const endedBefore = (options: KeeperOptions) =>
  Math.floor((options.clock() - options.counterRetentionMs) / 1000);
