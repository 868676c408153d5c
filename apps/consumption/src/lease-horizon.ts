import { AppError } from "@agentnet/contracts";
import { type LeaseHolder, type LeaseHorizon, TermFencedError, type UsageStore } from "./store/usage-store";

export interface LeaseHorizonOptions {
  durable: string;
  /** This leadership term, as the store records it (`claimTerm`): horizon writes are fenced by it. */
  term: string;
  quotaLeaseTtlMs: number;
  leaseOutageGraceMs: number;
  clock: () => number;
  /** A write found another term in the store: this one must never be resumed. */
  onFenced: () => void;
}

/**
 * What the store knows of the leases a leader grants, for whichever replica leads next: until when
 * they may be in use (an outage ridden included), until when granted ones last on their TTL, and
 * which proxies hold them. Writes run one at a time, each computed once those before it are done,
 * and the in-memory copy changes only once a write succeeded. Also what this term owes its
 * predecessor's leases, and the census that may shorten it (docs/ARCHITECTURE.md, "A census
 * shortens a new leader's wait after an outage").
 */
export class LeaseHorizonRecord {
  /** Leases may be in use until then, riding an outage included, as the store knows. */
  private leasesCoveredUntil: number;
  /** Leases granted so far end on their TTL by then at the latest, as the store knows. */
  private grantsCoveredUntil: number;
  /** Proxies granted leases, each with the latest it may have been granted one, as the store knows. */
  private readonly holders: Map<string, number>;
  /** Proxies granted leases since the last `coverGrants`, whose holder entries it moves on. */
  private grantedSinceCover = new Set<string>();
  /** Proxies about to be granted their first lease of the term, not yet recorded. */
  private unrecorded = new Set<string>();
  private covering: Promise<void> | undefined;
  private recording: Promise<void> | undefined;
  private writes: Promise<unknown> = Promise.resolve();
  /** Leases an earlier leader granted may be in use until then: this term grants none before. */
  private predecessorLeasesUntil: number;

  constructor(
    private readonly store: UsageStore,
    /** What the store said of earlier leaders' leases when this term loaded. */
    private readonly predecessor: LeaseHorizon,
    private readonly options: LeaseHorizonOptions,
  ) {
    this.leasesCoveredUntil = predecessor.until;
    this.grantsCoveredUntil = predecessor.grantsUntil;
    this.holders = new Map(predecessor.holders.map((holder) => [holder.proxy_id, holder.until]));
    this.predecessorLeasesUntil = predecessor.until;
  }

  /** Until then this term grants nothing: its predecessor's leases may be in use. */
  predecessorUntil(): number {
    return this.predecessorLeasesUntil;
  }

  /** Records that leases may be in use until `until` (NATS was lost: proxies ride them out). */
  outageUntil(until: number): Promise<void> {
    return this.write(() =>
      until > this.leasesCoveredUntil
        ? {
            update: { until },
            written: () => {
              this.leasesCoveredUntil = until;
            },
          }
        : undefined,
    );
  }

  /**
   * Before a grant to `proxyId`: the time by which it must end. Grants end by the horizon the store records
   * for them; once that is less than RECORD_AHEAD_TTLS × TTL away, a write moves it to now + 1.5 ×
   * TTL, with every proxy granted since the last such write (one write per quarter TTL under
   * traffic). Grants do not wait for that write while the recorded horizon leaves them MIN_GRANT_MS:
   * they end by it instead (a shorter TTL), so a store that restarts costs proxies nothing for about
   * 1.25 × TTL less MIN_GRANT_MS. A proxy's first grant of the term waits for its own holder entry.
   */
  async grantsEndBy(proxyId: string): Promise<number> {
    const ttlMs = this.options.quotaLeaseTtlMs;
    for (;;) {
      const now = this.options.clock();
      const left = this.grantsCoveredUntil - now;
      if (left < RECORD_AHEAD_TTLS * ttlMs) {
        const covering = this.coverGrants();
        if (left < Math.min(MIN_GRANT_MS, ttlMs)) {
          await covering;
          continue;
        }
        // The grant below does not wait for it: the next grant that must wait reports its failure.
        covering.catch(() => undefined);
      }
      if ((this.holders.get(proxyId) ?? 0) < now) {
        await this.recordHolder(proxyId);
        continue;
      }
      this.grantedSinceCover.add(proxyId);
      return this.grantsCoveredUntil;
    }
  }

  /**
   * The proxies a census must hear from before this term may grant ahead of the outage horizon an
   * earlier leader recorded: those it granted leases to within the outage grace (any of them may
   * be riding an outage on one). Undefined when no census can shorten the wait: the horizon is that
   * of the grants' TTLs, or over.
   */
  censusTargets(): string[] | undefined {
    const now = this.options.clock();
    if (this.predecessorLeasesUntil <= Math.max(this.predecessor.grantsUntil, now)) return undefined;
    return this.predecessor.holders
      .filter((holder) => holder.until + this.options.leaseOutageGraceMs > now)
      .map((holder) => holder.proxy_id);
  }

  /**
   * Every proxy of `censusTargets` answered the census with no event pending, and the stream's
   * events are settled through then (`at`): none admits on an earlier leader's leases any more,
   * and their usage is counted but for requests still in flight (the bound of any fail-over). A
   * grant answering an ask the proxy sent after the census can still come from a deposed leader
   * that has not noticed yet: it ends by the grants horizon the store had when this term loaded
   * (fenced by term, no later one can be written).
   */
  censusTaken(at: number): void {
    this.predecessorLeasesUntil = Math.min(
      this.predecessorLeasesUntil,
      Math.max(this.predecessor.grantsUntil, at),
    );
  }

  private coverGrants(): Promise<void> {
    this.covering ??= this.write(() => {
      const now = this.options.clock();
      const until = now + Math.ceil(1.5 * this.options.quotaLeaseTtlMs);
      if (until <= this.grantsCoveredUntil) return undefined;
      const refreshed = this.grantedSinceCover;
      this.grantedSinceCover = new Set();
      const holders = new Map(this.holders);
      for (const proxyId of refreshed) holders.set(proxyId, until);
      // Past the outage grace a holder can use none of the leases it was granted.
      for (const [proxyId, grantedUntil] of holders) {
        if (grantedUntil + this.options.leaseOutageGraceMs <= now) holders.delete(proxyId);
      }
      const leasesUntil = Math.max(this.leasesCoveredUntil, until);
      return {
        update: { until: leasesUntil, grantsUntil: until, holders: holderList(holders) },
        written: () => {
          this.leasesCoveredUntil = leasesUntil;
          this.grantsCoveredUntil = until;
          this.replaceHolders(holders);
        },
        failed: () => {
          for (const proxyId of refreshed) this.grantedSinceCover.add(proxyId);
        },
      };
    }).finally(() => {
      this.covering = undefined;
    });
    return this.covering;
  }

  /** Records the proxies about to be granted their first lease (in one write however many asked). */
  private recordHolder(proxyId: string): Promise<void> {
    this.unrecorded.add(proxyId);
    this.recording ??= this.write(() => {
      const recorded = this.unrecorded;
      this.unrecorded = new Set();
      const holders = new Map(this.holders);
      for (const id of recorded) holders.set(id, this.grantsCoveredUntil);
      return {
        update: { holders: holderList(holders) },
        written: () => this.replaceHolders(holders),
      };
    }).finally(() => {
      this.recording = undefined;
    });
    return this.recording;
  }

  private replaceHolders(holders: Map<string, number>) {
    this.holders.clear();
    for (const [proxyId, until] of holders) this.holders.set(proxyId, until);
  }

  private write(
    next: () =>
      | {
          update: Parameters<UsageStore["extendLeaseHorizon"]>[2];
          written: () => void;
          failed?: () => void;
        }
      | undefined,
  ): Promise<void> {
    const write = this.writes.then(async () => {
      const planned = next();
      if (!planned) return;
      try {
        await this.store.extendLeaseHorizon(this.options.durable, this.options.term, planned.update);
      } catch (error) {
        planned.failed?.();
        if (error instanceof TermFencedError) {
          this.options.onFenced();
          throw new AppError(503, "consumption.starting", "another consumption replica leads now");
        }
        throw error;
      }
      planned.written();
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}

/** A grants horizon closer than this many TTLs is moved on (the store outage grants ride out). */
const RECORD_AHEAD_TTLS = 1.25;
/** A grant shorter than this waits for the horizon's write: proxies renew at half a lease's TTL. */
const MIN_GRANT_MS = 1_000;

const holderList = (holders: Map<string, number>): LeaseHolder[] =>
  [...holders].map(([proxy_id, until]) => ({ proxy_id, until }));
