import { type Counter, CounterBook } from "@agentnet/caps";
import {
  AppError,
  type CapStatus,
  type GatewayRequestEvent,
  type LeaseReply,
  type LeaseRequest,
} from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import { capStatuses } from "./domain/cap-status";
import { LeaseHorizonRecord } from "./lease-horizon";
import { JournalFencedError, type JournalRef, type LeaseHorizon, type UsageStore } from "./store/usage-store";

export interface KeeperOptions {
  /** How long a lease of headroom lasts unless its proxy renews it. */
  quotaLeaseTtlMs: number;
  /** How long every lease is held when NATS is lost: proxies cut off with it keep using theirs that long. */
  leaseOutageGraceMs: number;
  /** The durable this replica settles with: leaders of the same durable share one lease horizon. */
  durable: string;
  /** Counters stay listed this long after their window ended, then are pruned. */
  counterRetentionMs: number;
  /** How long a settled event id is remembered: longer than JetStream takes to redeliver an unacked event. */
  redeliveryHorizonMs: number;
  clock: () => number;
  /**
   * Resolves once NATS answers a PING sent now, rejects if the connection drops first (nats.js
   * `flush`): a silent NATS is declared lost within seconds (`connectBus`).
   */
  busAnswers: () => Promise<void>;
}

/**
 * The leader's consumption state: the counter book in memory, persisted through the usage store.
 * Leases are granted in memory (synchronously, so check-and-grant is atomic); settled usage is
 * journaled before it is applied, so a crash loses at most leases, never counted usage. Writes
 * to the store run one at a time, in the order they were asked for.
 */
export class UsageKeeper {
  private lastSeq: number;
  /**
   * The journal refused an entry: it holds entries this memory lacks (another replica's, or this
   * one's own write whose answer was lost in a store outage and which the driver then retried).
   * This state must be loaded again from the store, never resumed: resumed, it would try the same
   * sequence number forever.
   */
  private fenced = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** What the store knows of this term's leases and its predecessor's, for the next leader. */
  private readonly horizon: LeaseHorizonRecord;
  /** Events an earlier leader fetched and did not ack come again by then (`awaitRedelivery`). */
  private redeliveredBy = 0;

  private constructor(
    private readonly book: CounterBook,
    private readonly store: UsageStore,
    private readonly options: KeeperOptions,
    nextSeq: number,
    /** The journal's entries, oldest first: the leader alone writes it, so it knows them all. */
    private readonly journal: JournalRef[],
    /** What the store said of earlier leaders' leases when this keeper loaded. */
    predecessor: LeaseHorizon,
    /** This keeper's leadership term, as recorded in the store when it loaded. */
    private readonly term: string,
  ) {
    this.lastSeq = nextSeq - 1;
    this.horizon = new LeaseHorizonRecord(store, predecessor, {
      durable: options.durable,
      term,
      quotaLeaseTtlMs: options.quotaLeaseTtlMs,
      leaseOutageGraceMs: options.leaseOutageGraceMs,
      clock: options.clock,
      onFenced: () => {
        this.fenced = true;
      },
    });
  }

  /** Rebuilds the book from the store's snapshots and journal. */
  static async load(store: UsageStore, options: KeeperOptions): Promise<UsageKeeper> {
    // The claim comes first: a horizon a deposed leader writes after it is fenced, one written
    // before it is in what is read next.
    const term = newId();
    await store.claimTerm(options.durable, term);
    const [loaded, horizon] = await Promise.all([
      store.load(endedBefore(options), options.redeliveryHorizonMs),
      store.leaseHorizon(options.durable),
    ]);
    const book = new CounterBook(newId, options.redeliveryHorizonMs);
    for (const delta of loaded.deltas) book.addUsage(delta);
    // Loaded counters are already persisted as they are; only later changes need a snapshot.
    book.takeDirty();
    book.remember(loaded.recentEventIds, options.clock());
    return new UsageKeeper(book, store, options, loaded.nextSeq, loaded.journal, horizon, term);
  }

  /**
   * Whether this keeper may serve another term as it is: no other replica loaded the counters
   * since it did, so its book (counters, leases, remembered event ids) is still the whole truth.
   * A replica that lost its leadership in a NATS outage and wins it back resumes at once, without
   * the wait a new leader owes its predecessor's leases.
   */
  async stillOwnsTerm(): Promise<boolean> {
    if (this.fenced) return false;
    return (await this.store.leaseHorizon(this.options.durable)).term === this.term;
  }

  /**
   * NATS is gone: proxies keep admitting on their leases for `leaseOutageGraceMs` after the leader
   * last confirmed them, so every lease is held that long, and the horizon is moved there for
   * whichever replica leads next.
   */
  async busLost(): Promise<void> {
    const until = this.options.clock() + this.options.leaseOutageGraceMs;
    this.book.holdLeasesUntil(until);
    await this.horizon.outageUntil(until);
  }

  /**
   * This book leads again after a term no replica led (its leadership lapsed in a JetStream
   * outage): proxies could not renew their leases meanwhile, so each gets a TTL from now to ask
   * again before it ends, with the usage of its requests still unsettled.
   */
  resumed(): void {
    this.book.holdLeasesUntil(this.options.clock() + this.options.quotaLeaseTtlMs);
  }

  /**
   * Grants leases of headroom. A new leader cannot know what its predecessor leased, so it grants
   * nothing until every lease the store says may be out has ended (503: proxies keep serving on
   * their leases meanwhile), or its census says when they do (`censusTaken`). Its own grants end
   * by the horizon it records in the store (`LeaseHorizonRecord.grantsEndBy`), so the next leader
   * knows how long to wait: within a TTL of it, shorter than a TTL.
   */
  async lease(request: LeaseRequest): Promise<LeaseReply> {
    if (this.options.clock() < this.graceUntil()) {
      throw new AppError(503, "consumption.starting", "consumption just took over; leases resume shortly");
    }
    const endBy = await this.horizon.grantsEndBy(request.proxy_id);
    // A horizon write found another term in the store: that replica leads, with usage this book
    // lacks. Grants no longer wait for each write, so the fence is looked at here.
    if (this.fenced) throw new AppError(503, "consumption.starting", "another consumption replica leads now");
    const now = this.options.clock();
    const ttlMs = Math.min(this.options.quotaLeaseTtlMs, Math.floor(endBy - now));
    const grants = this.book.grantLeases(request, now, ttlMs);
    return { grants, ttl_ms: ttlMs };
  }

  /**
   * Events an earlier leader fetched and did not ack (it died mid-batch: up to a fetch's second of
   * traffic) come back only once their ack wait ends, `until`; their usage is not in the counters
   * meanwhile, so this leader grants nothing before: it would lease headroom they already used.
   */
  awaitRedelivery(until: number): void {
    this.redeliveredBy = Math.max(this.redeliveredBy, until);
  }

  /** See `LeaseHorizonRecord.censusTargets`. */
  censusTargets(): string[] | undefined {
    return this.horizon.censusTargets();
  }

  /** See `LeaseHorizonRecord.censusTaken`. */
  censusTaken(at: number): void {
    this.horizon.censusTaken(at);
  }

  /** Until then this leader grants nothing (503 `consumption.starting`). */
  graceUntil(): number {
    return Math.max(this.horizon.predecessorUntil(), this.redeliveredBy);
  }

  /** Counters whose headroom other proxies are to give back (`CounterBook.takeReclaims`). */
  takeReclaims(): string[] {
    return this.book.takeReclaims();
  }

  /** The caps that apply to the caller under `config`, with their counters' state now. */
  caps(caller: Parameters<typeof capStatuses>[0], config: Parameters<typeof capStatuses>[1]): CapStatus[] {
    return capStatuses(caller, config, (key) => this.book.counter(key), this.options.clock());
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
        try {
          this.journal.push(
            await this.store.append(this.lastSeq + 1, settlement.eventIds, settlement.deltas, now),
          );
        } catch (error) {
          if (error instanceof JournalFencedError) this.fenced = true;
          throw error;
        }
        this.lastSeq++;
      }
      this.book.commit(settlement, now);
    });
  }

  /**
   * Forgets what no redelivery can need any more, and ends leases past their expiry once NATS has
   * answered since: a lease that ran out while NATS was silent is one its proxy rides out the
   * outage on, should the silence turn out to be one (`busLost` then holds it). Only leases that
   * ran out by when `settledThrough` says every stored event was settled end: the events of a
   * lease's last requests reach the stream before its proxy lets it lapse, but through a JetStream
   * outage they wait there unsettled, and freeing the lease would grant their usage again.
   * Returns how many leases ended.
   */
  async sweepExpired(settledThrough: (now: number) => Promise<number>): Promise<number> {
    const now = this.options.clock();
    this.book.forget(now);
    try {
      await this.options.busAnswers();
    } catch {
      return 0;
    }
    return this.book.expire(Math.min(now, await settledThrough(now)));
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
