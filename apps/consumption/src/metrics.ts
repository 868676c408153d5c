import type { GatewayRequestEvent } from "@agentnet/contracts";
import type { MetricsRegistry } from "@agentnet/service-kit";
import { Counter, Histogram } from "prom-client";

/** From a settle within the batch's own turn to a backlog of minutes (a leader taking over). */
const LAG_SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** Consumption's metrics (docs/OPERATIONS.md, "Metrics"): what the leader settles, and how late. */
export class ConsumptionMetrics {
  private readonly events: Counter;
  private readonly lagSeconds: Histogram;

  constructor(registry: MetricsRegistry) {
    this.events = new Counter({
      name: "agentnet_consumption_events_settled_total",
      help: "Request events whose usage the leader settled into the counters (journaled, then acked)",
      registers: [registry],
    });
    this.lagSeconds = new Histogram({
      name: "agentnet_consumption_settlement_lag_seconds",
      help: "From a request's end (its event's timestamp plus duration) to its usage being settled",
      buckets: LAG_SECONDS_BUCKETS,
      registers: [registry],
    });
  }

  /** A batch of `events` is settled, at `now` (epoch ms). */
  settled(events: readonly GatewayRequestEvent[], now: number): void {
    this.events.inc(events.length);
    for (const event of events) {
      const ended = Date.parse(event.timestamp) + event.duration_ms;
      this.lagSeconds.observe(Math.max(0, now - ended) / 1000);
    }
  }
}
