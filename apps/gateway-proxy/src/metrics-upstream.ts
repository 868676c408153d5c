import {
  BoundCounter,
  BoundHistogram,
  type CounterSeries,
  gaugeOf,
  type HistogramSeries,
  type MetricsRegistry,
} from "@agentnet/service-kit";
import { Gauge } from "prom-client";
import type { Upstream, UpstreamPools } from "./upstream/pools";

/*
 * The upstream origins' bound (AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN) in the proxy's metrics
 * (docs/OPERATIONS.md, "Metrics"). The `origin` label is the upstream's host: account admins name
 * upstreams, so only the first `MAX_NAMED_ORIGINS` hosts this process reaches get a label of their
 * own and any later one counts as "other". The request path touches these only when an origin is
 * at its bound.
 */

/** Hosts named in the labels at most; enough for every vendor a deployment uses. */
export const MAX_NAMED_ORIGINS = 50;
const OTHER_ORIGIN = "other";

/** From a slot freed at once to the longest wait worth configuring. */
const WAIT_SECONDS_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What one origin label adds to when a request finds the origin at its bound. */
export interface OriginSeries {
  waitSeconds: HistogramSeries;
  refused: CounterSeries;
}

export class UpstreamMetrics {
  private readonly waitSeconds: BoundHistogram<"origin">;
  private readonly refused: BoundCounter<"origin">;
  /** Hosts with a label of their own: the first `MAX_NAMED_ORIGINS` seen, by any of the metrics. */
  private readonly named = new Set<string>();
  private readonly series = new Map<string, OriginSeries>();

  constructor(private readonly registry: MetricsRegistry) {
    this.waitSeconds = new BoundHistogram(registry, {
      name: "agentnet_proxy_upstream_slot_wait_seconds",
      help: "Requests that found their upstream origin at its bound (AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN): how long they waited, for a slot or until refused, by origin host",
      labelNames: ["origin"],
      buckets: WAIT_SECONDS_BUCKETS,
    });
    this.refused = new BoundCounter(registry, {
      name: "agentnet_proxy_upstream_busy_total",
      help: "Attempts that got no slot at their upstream origin in time (gateway.upstream_busy): moved to another provider, or answered 503 (529 on Anthropic's wire), by origin host",
      labelNames: ["origin"],
    });
  }

  /** The series of an upstream host's label. */
  origin(host: string): OriginSeries {
    const label = this.labelOf(host);
    let series = this.series.get(label);
    if (!series) {
      series = this.bind(label);
      this.series.set(label, series);
    }
    return series;
  }

  /** A host's own name among the first hosts seen, else "other". */
  private labelOf(host: string): string {
    if (this.named.has(host)) return host;
    if (this.named.size >= MAX_NAMED_ORIGINS) return OTHER_ORIGIN;
    this.named.add(host);
    return host;
  }

  /** Requests in flight and waiting at each origin, and the bound, read at each scrape. */
  follow(pools: Pick<UpstreamPools, "list" | "connectionsPerOrigin">): void {
    const labelOf = (upstream: Upstream) => this.labelOf(upstream.host);
    const byOrigin = (name: string, help: string, read: (upstream: Upstream) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["origin"],
        registers: [this.registry],
        collect() {
          this.reset();
          const sums = new Map<string, number>();
          for (const upstream of pools.list()) {
            const label = labelOf(upstream);
            sums.set(label, (sums.get(label) ?? 0) + read(upstream));
          }
          for (const [origin, value] of sums) this.set({ origin }, value);
        },
      });
    byOrigin(
      "agentnet_proxy_upstream_requests_in_flight",
      "Requests holding a slot at an upstream origin (sent, or being sent), by origin host",
      (upstream) => upstream.slots.inFlight,
    );
    byOrigin(
      "agentnet_proxy_upstream_requests_waiting",
      "Requests waiting for a slot at an upstream origin at its bound, by origin host",
      (upstream) => upstream.slots.waiting,
    );
    gaugeOf(
      this.registry,
      {
        name: "agentnet_proxy_upstream_requests_limit",
        help: "Requests in flight to one upstream origin at most (AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN)",
      },
      () => pools.connectionsPerOrigin,
    );
  }

  private bind(origin: string): OriginSeries {
    return { waitSeconds: this.waitSeconds.bind({ origin }), refused: this.refused.bind({ origin }) };
  }
}
