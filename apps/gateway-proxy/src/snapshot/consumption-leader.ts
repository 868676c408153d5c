import { jsonOrUndefined, type NatsConnection, type Subscription } from "@agentnet/bus";
import {
  CONSUMPTION_CENSUS_SUBJECT,
  CONSUMPTION_LEADER_SUBJECT,
  Consumption,
  ConsumptionCensus,
  type ConsumptionCensusAnswer,
  ConsumptionLeaderAnnouncement,
} from "@agentnet/contracts";

/** A leader not heard for this long may be gone: ask the shared queue subject again. */
const LEADER_SILENCE_MS = 3_000;

/**
 * Where this proxy sends lease requests: the subject the consumption leader last announced for its
 * term, while it keeps announcing; the shared queue subject before any announcement or after the
 * leader fell silent. A frozen ex-leader stays subscribed to the queue subject until NATS drops
 * it, but never gets a request on the new leader's term subject. A new leader's census is answered
 * here too (`onCensus`), and names the new term's subject.
 */
export class ConsumptionLeader {
  private announced: string | undefined;
  private heardAt = Number.NEGATIVE_INFINITY;
  private readonly subscriptions: Subscription[];
  private reclaimed: (counterIds: string[]) => void = () => undefined;
  private answerCensus: (() => ConsumptionCensusAnswer) | undefined;

  constructor(
    nc: NatsConnection,
    private readonly clock: () => number = Date.now,
  ) {
    const announcements = nc.subscribe(CONSUMPTION_LEADER_SUBJECT, {
      callback: (error, msg) => {
        if (error) return;
        const parsed = ConsumptionLeaderAnnouncement.safeParse(jsonOrUndefined(msg.string()));
        if (!parsed.success) return;
        this.follow(parsed.data.lease_subject);
        if (parsed.data.reclaim) this.reclaimed(parsed.data.reclaim);
      },
    });
    const censuses = nc.subscribe(CONSUMPTION_CENSUS_SUBJECT, {
      callback: (error, msg) => {
        if (error || !this.answerCensus || !msg.reply) return;
        const parsed = ConsumptionCensus.safeParse(jsonOrUndefined(msg.string()));
        if (!parsed.success) return;
        this.follow(parsed.data.lease_subject);
        msg.respond(JSON.stringify(this.answerCensus()));
      },
    });
    this.subscriptions = [announcements, censuses];
  }

  /** Answers a new leader's census with what `answer` says (`LeaseTable.census`). */
  onCensus(answer: () => ConsumptionCensusAnswer): void {
    this.answerCensus = answer;
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
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  private follow(leaseSubject: string) {
    this.announced = leaseSubject;
    this.heardAt = this.clock();
  }
}
