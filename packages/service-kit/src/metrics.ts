import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

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

/** The scrape answer: every metric of `registry` in Prometheus' text format. */
export async function metricsResponse(registry: Registry): Promise<{ contentType: string; body: string }> {
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
