import type { Warehouse } from "@agentnet/clickhouse";
import type { MetricsRegistry } from "@agentnet/service-kit";
import { Counter, Gauge, Histogram } from "prom-client";

/** From a point read on chDB to a long analytics scan. */
const QUERY_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type QueryOutcome = "ok" | "error";

/** What the request consumer has not done yet, as JetStream's consumer info tells it. */
export interface IngestBacklog {
  /** Stored in the stream, not yet delivered to telemetry (`num_pending`). */
  undelivered: number;
  /** Delivered, not yet written and acked (`num_ack_pending`). */
  unacked: number;
}

/** Telemetry's metrics (docs/OPERATIONS.md, "Metrics"): ingest, its consumer's backlog, named queries. */
export class TelemetryMetrics {
  private readonly rows: Counter;
  private readonly failedBatches: Counter;
  private readonly querySeconds: Histogram<"query" | "outcome">;

  constructor(private readonly registry: MetricsRegistry) {
    this.rows = new Counter({
      name: "agentnet_telemetry_rows_ingested_total",
      help: "Request events written to the warehouse and acked",
      registers: [registry],
    });
    this.failedBatches = new Counter({
      name: "agentnet_telemetry_ingest_failed_batches_total",
      help: "Batches whose write failed (redelivered after a delay)",
      registers: [registry],
    });
    this.querySeconds = new Histogram({
      name: "agentnet_telemetry_query_duration_seconds",
      help: "Named warehouse queries (defineQuery), from sending to parsed rows, by query and outcome",
      labelNames: ["query", "outcome"],
      buckets: QUERY_SECONDS_BUCKETS,
      registers: [registry],
    });
  }

  ingested(rows: number): void {
    this.rows.inc(rows);
  }

  ingestFailed(): void {
    this.failedBatches.inc();
  }

  /**
   * The consumer's backlog, asked of JetStream at each scrape. Unanswered (NATS down), the series
   * are left out of that scrape rather than repeating a stale number.
   */
  followBacklog(read: () => Promise<IngestBacklog>): void {
    new Gauge({
      name: "agentnet_telemetry_consumer_pending_messages",
      help: "Request events the telemetry consumer has yet to store: undelivered (its lag behind the stream) and unacked",
      labelNames: ["state"],
      registers: [this.registry],
      async collect() {
        this.reset();
        const backlog = await read().catch(() => undefined);
        if (!backlog) return;
        this.set({ state: "undelivered" }, backlog.undelivered);
        this.set({ state: "unacked" }, backlog.unacked);
      },
    });
  }

  /** Times one run of the named query `name`: call what it returns with how it ended. */
  timeQuery(name: string): (outcome: QueryOutcome) => void {
    const started = performance.now();
    return (outcome) =>
      this.querySeconds.observe({ query: name, outcome }, (performance.now() - started) / 1000);
  }
}

const timedWarehouses = new WeakMap<Warehouse, TelemetryMetrics>();

/** Times the named queries run on `warehouse` in `metrics`; undefined (metrics off) times nothing. */
export function timeQueriesOn(warehouse: Warehouse, metrics: TelemetryMetrics | undefined): void {
  if (metrics) timedWarehouses.set(warehouse, metrics);
}

/** Starts timing a named query on `warehouse`, when its queries are timed. */
export const queryTimer = (warehouse: Warehouse, name: string) =>
  timedWarehouses.get(warehouse)?.timeQuery(name);
