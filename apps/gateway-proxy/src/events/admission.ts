import { maxEventBytes, maxPayloadOf, type NatsConnection, publishOrReport } from "@agentnet/bus";
import { Events, PROXY_LOST_REASON, PROXY_LOST_STATUS } from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import type { Logger } from "@agentnet/service-kit";
import type { AdmittedTokens, Pricing } from "../domain/estimate";
import { zeroUsage } from "../wires";
import { buildEvent, type RequestRecord } from "./build";
import { fitEvent } from "./fit";

interface Admission {
  record: RequestRecord;
  admitted: AdmittedTokens;
  pricing: Pricing;
}

/**
 * Tells the consumption leader, as requests are forwarded, what each stands for should this proxy
 * die before its answer ends: the request's event as the leader would publish it then, its row
 * marked PROXY_LOST_REASON and charged what it was admitted with (the prompt estimate and its first
 * output hold). Core NATS, no ack, so a request waits for nothing; the admissions of one event-loop
 * turn leave as one message (one per request cost the bus a third of the proxy's throughput), one
 * line `<request id> <event JSON>` each, split over as many messages as the server's max_payload
 * asks. They are built and sent in the check phase of the turn they were announced in, right after
 * the turn's upstream writes (`behindUpstreamWrites`: undici writes a request on a reused
 * keep-alive connection in a `setImmediate` it queues at dispatch): before them, a request waited
 * for its admission's build and write, and for the NATS and consumption work that wakes. The
 * proxy's own event always reaches the leader later: it is published on the same connection, and
 * `flushBefore` sends the request's admission first should it still wait. An admission is never
 * larger than an event may be (the leader publishes it as one): one with a giant model name has
 * its long fields cut, one that cannot fit is not announced.
 */
export class AdmissionAnnouncer {
  private waiting: Admission[] = [];
  /** The requests of `waiting`, by id: an event must not overtake its own admission. */
  private readonly waitingIds = new Set<string>();
  private scheduled: NodeJS.Immediate | undefined;
  /** Admissions announced with their long fields cut to fit. */
  truncated = 0;
  /** Admissions not announced: too large for the bus even cut (or, unexpectedly, not buildable). */
  dropped = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly proxyId: string,
    private readonly logger: Logger,
  ) {}

  /**
   * `record` is the admission's own (`requestRecord` built it for this call): it is completed in
   * place when the admission is sent.
   */
  announce(record: RequestRecord, admitted: AdmittedTokens, pricing: Pricing): void {
    if (!record.metered) return;
    this.waiting.push({ record, admitted, pricing });
    this.waitingIds.add(record.id);
    this.scheduled ??= setImmediate(this.flushScheduled);
  }

  /**
   * An upstream request was just dispatched: what waits goes out right behind its write, in this
   * check phase, rather than ahead of it.
   */
  behindUpstreamWrites(): void {
    if (this.scheduled === undefined) return;
    clearImmediate(this.scheduled);
    this.scheduled = setImmediate(this.flushScheduled);
  }

  private readonly flushScheduled = () => {
    this.scheduled = undefined;
    this.flush();
  };

  /** Sends what waits now if the admission of request `id` is among it: its event goes out next. */
  flushBefore(id: string): void {
    if (this.waitingIds.has(id)) this.flush();
  }

  flush(): void {
    const admissions = this.waiting;
    this.waiting = [];
    this.waitingIds.clear();
    const limit = maxPayloadOf(this.nc);
    let batch: string[] = [];
    let bytes = 0;
    for (const admission of admissions) {
      const line = this.lineOrNone(admission);
      if (line === undefined) continue;
      // With its line break; one line alone always fits, being no larger than an event.
      const lineBytes = Buffer.byteLength(line) + 1;
      if (batch.length > 0 && bytes + lineBytes > limit) {
        this.publish(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(line);
      bytes += lineBytes;
    }
    if (batch.length > 0) this.publish(batch);
  }

  /** `line`, or undefined (logged and counted as dropped) should building it throw: the others still go. */
  private lineOrNone(admission: Admission): string | undefined {
    try {
      return this.line(admission);
    } catch (error) {
      this.dropped++;
      this.logger.error(
        { err: error, request_id: admission.record.id },
        "admission cannot be built: not announced",
      );
      return undefined;
    }
  }

  /** The admission's line, `<request id> <event JSON>`; undefined when it cannot fit the bus. */
  private line({ record, admitted, pricing }: Admission): string | undefined {
    const usage = { ...zeroUsage(), ...admitted };
    // Set on the record rather than spread into a copy: the copy cost as much as building the event.
    record.endedAt = record.startedAt;
    record.status = PROXY_LOST_STATUS;
    record.denyReason = PROXY_LOST_REASON;
    record.usage = usage;
    record.cost = computeCost(usage, pricing.rates, pricing.shape);
    const event = buildEvent(record);
    let json = JSON.stringify(event);
    const limit = maxEventBytes(this.nc);
    // A UTF-16 unit takes at most 3 bytes: only a very long event needs counting.
    if (json.length * 3 > limit && Buffer.byteLength(json) > limit) {
      const fitted = fitEvent(event, limit);
      if (fitted === undefined) {
        this.dropped++;
        this.logger.warn(
          { request_id: record.id, bytes: Buffer.byteLength(json), limit_bytes: limit },
          "admission too large for the bus: not announced",
        );
        return undefined;
      }
      this.truncated++;
      json = JSON.stringify(fitted);
    }
    // JSON never holds a raw line break, so lines separate admissions.
    return `${record.id} ${json}`;
  }

  status() {
    return { truncated: this.truncated, dropped: this.dropped };
  }

  private publish(lines: string[]): void {
    publishOrReport(this.nc, Events.proxyAdmitted(this.proxyId), lines.join("\n"), (err) =>
      this.logger.warn({ reason: err.message, admissions: lines.length }, "cannot announce admissions"),
    );
  }
}
