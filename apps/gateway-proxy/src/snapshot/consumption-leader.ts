import { jsonOrUndefined, type NatsConnection, type Subscription } from "@agentnet/bus";
import { CONSUMPTION_LEADER_SUBJECT, Consumption, ConsumptionLeaderAnnouncement } from "@agentnet/contracts";

/** A leader not heard for this long may be gone: ask the shared queue subject again. */
const LEADER_SILENCE_MS = 3_000;

/**
 * Where this proxy sends lease requests: the subject the consumption leader last announced for its
 * term, while it keeps announcing; the shared queue subject before any announcement or after the
 * leader fell silent. A frozen ex-leader stays subscribed to the queue subject until NATS drops
 * it, but never gets a request on the new leader's term subject.
 */
export class ConsumptionLeader {
  private announced: string | undefined;
  private heardAt = Number.NEGATIVE_INFINITY;
  private readonly subscription: Subscription;
  private reclaimed: (counterIds: string[]) => void = () => undefined;

  constructor(
    nc: NatsConnection,
    private readonly clock: () => number = Date.now,
  ) {
    this.subscription = nc.subscribe(CONSUMPTION_LEADER_SUBJECT, {
      callback: (error, msg) => {
        if (error) return;
        const parsed = ConsumptionLeaderAnnouncement.safeParse(jsonOrUndefined(msg.string()));
        if (!parsed.success) return;
        this.announced = parsed.data.lease_subject;
        this.heardAt = this.clock();
        if (parsed.data.reclaim) this.reclaimed(parsed.data.reclaim);
      },
    });
  }

  /** Calls `listener` with the counters the leader asks proxies to give headroom back on. */
  onReclaim(listener: (counterIds: string[]) => void): void {
    this.reclaimed = listener;
  }

  leaseSubject(): string {
    return this.announced && this.clock() - this.heardAt <= LEADER_SILENCE_MS
      ? this.announced
      : Consumption.lease.subject;
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}
