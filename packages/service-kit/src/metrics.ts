import { Counter, collectDefaultMetrics, Gauge, type Histogram, Registry } from "prom-client";

export type { Registry as MetricsRegistry } from "prom-client";

/**
 * One service's metrics (docs/OPERATIONS.md, "Metrics"): Node's and the process's own under
 * prom-client's usual names (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, ...), so
 * stock Node.js dashboards work, and the service's under `agentnet_`. Every series carries the
 * service's name as its `service` label. A registry per service rather than prom-client's global
 * one: the e2e stack runs every service in one process, each with metrics of its own.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Where a service serves its metrics (`AGN_METRICS_PORT`, `AGN_METRICS_HOST`). */
export interface MetricsSettings {
  /** 0 picks a free port (the ready line says which). */
  port: number;
  host: string;
}

/** The metrics listener the environment asks for, or undefined (no port): no metrics are kept. */
export const metricsSettings = (env: {
  AGN_METRICS_PORT?: number | undefined;
  AGN_METRICS_HOST: string;
}): MetricsSettings | undefined =>
  env.AGN_METRICS_PORT === undefined ? undefined : { port: env.AGN_METRICS_PORT, host: env.AGN_METRICS_HOST };

/** What a scrape reads: a registry, or the sum of a cluster's workers' registries (`runWorkers`). */
export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

/** The scrape answer: every metric of `registry` in Prometheus' text format. */
export async function metricsResponse(
  registry: MetricsSource,
): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

interface MetricNaming<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}

/** One labelled series of a `BoundCounter`: the hot path adds to `value`, nothing else. */
export interface CounterSeries {
  value: number;
}

/**
 * A counter for the request path: each label combination is bound once (the caller keeps what
 * `bind` returns) and counted as a plain number; a scrape adds what each gained since the last one
 * to the prom-client counter. prom-client hashes and validates the label values on every `inc`
 * (~0.5 µs), which a proxy counting several things per request would pay on each of them.
 */
export class BoundCounter<L extends string> {
  private readonly series: { labels: Record<L, string>; value: number; reported: number }[] = [];

  constructor(registry: Registry, naming: MetricNaming<L>) {
    const series = this.series;
    new Counter<L>({
      ...naming,
      registers: [registry],
      collect() {
        for (const one of series) {
          if (one.value === one.reported) continue;
          this.inc(one.labels, one.value - one.reported);
          one.reported = one.value;
        }
      },
    });
  }

  /** A series of its own for `labels`: call once per combination, never per request. */
  bind(labels: Record<L, string>): CounterSeries {
    const one = { labels, value: 0, reported: 0 };
    this.series.push(one);
    return one;
  }
}

/** One labelled series of a `BoundHistogram`: observing adds to plain numbers. */
export class HistogramSeries {
  /** Observations per bucket, not cumulative; the last one is above every bound (`+Inf`). */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Record<string, string>,
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++;
    this.counts[bucket] = (this.counts[bucket] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

/**
 * A histogram for the request path, as `BoundCounter` is a counter: each label combination is
 * bound once and observed into plain numbers, which a scrape reads as prom-client's histograms
 * read (cumulative `_bucket` series with `le`, `_sum`, `_count`). prom-client's own hashes and
 * validates the labels of every observation (~0.8 µs). Bind each label combination once: two
 * series bound to the same labels would be exposed twice.
 */
export class BoundHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly buckets: readonly number[];
  private readonly series: HistogramSeries[] = [];

  constructor(registry: Registry, naming: MetricNaming<L> & { buckets: readonly number[] }) {
    this.name = naming.name;
    this.help = naming.help;
    this.buckets = [...naming.buckets].sort((a, b) => a - b);
    // A registry takes any object that reads like one of its metrics (name, help, type, get).
    registry.registerMetric(this as unknown as Histogram<L>);
  }

  bind(labels: Record<L, string>): HistogramSeries {
    const one = new HistogramSeries(this.buckets, labels);
    this.series.push(one);
    return one;
  }

  /** What a scrape reads, in prom-client's shape. */
  async get() {
    const values = this.series.flatMap((one) => {
      let cumulative = 0;
      const buckets = one.counts.map((count, i) => {
        cumulative += count;
        const le = i < this.buckets.length ? (this.buckets[i] as number) : "+Inf";
        return { labels: { ...one.labels, le }, value: cumulative, metricName: `${this.name}_bucket` };
      });
      return [
        ...buckets,
        { labels: one.labels, value: one.sum, metricName: `${this.name}_sum` },
        { labels: one.labels, value: one.count, metricName: `${this.name}_count` },
      ];
    });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const one of this.series) {
      one.counts.fill(0);
      one.sum = 0;
      one.count = 0;
    }
  }
}

/**
 * A counter kept by someone else (a publisher's published events, say), read at each scrape: it
 * grows by what `read` gained since the last one. `read` must only ever grow.
 */
export function countedElsewhere(
  registry: Registry,
  naming: Omit<MetricNaming<never>, "labelNames">,
  read: () => number,
) {
  let reported = 0;
  return new Counter({
    ...naming,
    registers: [registry],
    collect() {
      const now = read();
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}

/** A gauge read at each scrape (a buffer's length, a consumer's backlog). */
export function gaugeOf(
  registry: Registry,
  naming: Omit<MetricNaming<never>, "labelNames">,
  read: () => number | Promise<number>,
) {
  return new Gauge({
    ...naming,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}
