import type { NatsConnection } from "@agentnet/bus";
import { Events, PROXY_LOST_REASON, PROXY_LOST_STATUS } from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import type { AdmittedTokens, Pricing } from "../domain/estimate";
import { zeroUsage } from "../upstream/usage";
import { buildEvent, type RequestRecord } from "./build";

/**
 * Tells the consumption leader, as requests are forwarded, what each stands for should this proxy
 * die before its answer ends: the request's event as the leader would publish it then, its row
 * marked PROXY_LOST_REASON and charged what it was admitted with (the prompt estimate and its first
 * output hold). Core NATS, no ack, so a request waits for nothing; the admissions of one event-loop
 * turn leave as one message (one per request cost the bus a third of the proxy's throughput), one
 * line `<request id> <event JSON>` each. The proxy's own event, published on the same connection
 * after the answer, always reaches the leader later.
 */
export class AdmissionAnnouncer {
  private lines: string[] = [];
  private scheduled = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly proxyId: string,
  ) {}

  announce(record: RequestRecord, admitted: AdmittedTokens, pricing: Pricing): void {
    if (!record.metered) return;
    const usage = { ...zeroUsage(), ...admitted };
    const event = buildEvent({
      ...record,
      endedAt: record.startedAt,
      status: PROXY_LOST_STATUS,
      denyReason: PROXY_LOST_REASON,
      usage,
      cost: computeCost(usage, pricing.rates, pricing.shape),
    });
    // JSON never holds a raw line break, so lines separate admissions.
    this.lines.push(`${record.id} ${JSON.stringify(event)}`);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const payload = this.lines.join("\n");
    this.lines = [];
    if (!this.nc.isClosed()) this.nc.publish(Events.proxyAdmitted(this.proxyId), payload);
  }
}
