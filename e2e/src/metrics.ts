// Named here so that packages typechecking this file under their own tsconfig (the dashboard's) find it too.
/// <reference path="./parse-prometheus-text-format.d.ts" />
import { type NatsConnection, useBusMetrics } from "@agentnet/bus";
import { createHealth, createMetricsRegistry, serverPort, startHealthServer } from "@agentnet/service-kit";
import parsePrometheusTextFormat from "parse-prometheus-text-format";

/** A service's registry on a loopback listener of its own, as `AGN_METRICS_PORT` serves it. */
async function serveMetrics(service: string) {
  const registry = createMetricsRegistry(service);
  const health = createHealth();
  health.setReady(true);
  const server = await startHealthServer(health, 0, "127.0.0.1", registry);
  return {
    registry,
    url: `http://127.0.0.1:${serverPort(server)}/metrics`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Metrics of the stack's gateway proxy, api-gateway, telemetry and consumption, each in a registry
 * of its own on a listener of its own; the first three's bus requests timed (consumption's bus is
 * the stack's to time: it replaces it when consumption restarts).
 */
export async function serveStackMetrics(buses: {
  proxy: NatsConnection;
  api: NatsConnection;
  telemetry: NatsConnection;
}) {
  const served = {
    proxy: await serveMetrics("gateway-proxy"),
    api: await serveMetrics("api-gateway"),
    telemetry: await serveMetrics("telemetry"),
    consumption: await serveMetrics("consumption"),
  };
  useBusMetrics(buses.proxy, served.proxy.registry);
  useBusMetrics(buses.api, served.api.registry);
  useBusMetrics(buses.telemetry, served.telemetry.registry);
  return {
    ...served,
    urls: {
      proxy: served.proxy.url,
      api: served.api.url,
      telemetry: served.telemetry.url,
      consumption: served.consumption.url,
    },
    stop: async () => {
      for (const one of Object.values(served)) await one.stop();
    },
  };
}

/** One series of a scrape: its labels and its value, or for a histogram its buckets, count and sum. */
export interface Series {
  labels: Record<string, string>;
  value?: number;
  buckets?: Record<string, number>;
  count?: number;
  sum?: number;
}

const labelsKey = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort());

/**
 * A scrape of `url`, parsed by a Prometheus text-format parser: series by metric name. The parser
 * (parse-prometheus-text-format 1.1.1) folds every labelled series of a histogram into one, so
 * histograms are read as their plain `_bucket`, `_sum` and `_count` samples and put back together
 * here, series by series.
 */
export async function scrape(url: string): Promise<Map<string, Series[]>> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  const text = await response.text();
  const histograms = [...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1] as string);
  const families = parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, "$1 untyped"));
  // A histogram's series alternate their `_bucket`, `_sum` and `_count` lines: one name, several runs.
  const samples = new Map<string, { labels: Record<string, string>; value: number }[]>();
  for (const family of families) {
    const runs = samples.get(family.name) ?? [];
    for (const metric of family.metrics)
      runs.push({ labels: metric.labels ?? {}, value: Number(metric.value) });
    samples.set(family.name, runs);
  }
  const scraped = new Map<string, Series[]>(samples);
  for (const name of histograms) {
    const byLabels = new Map<string, Series>();
    for (const { labels, value } of samples.get(`${name}_bucket`) ?? []) {
      const { le, ...rest } = labels;
      const key = labelsKey(rest);
      const series = byLabels.get(key) ?? { labels: rest, buckets: {} };
      byLabels.set(key, { ...series, buckets: { ...series.buckets, [le ?? ""]: value } });
    }
    for (const [part, field] of [
      ["_count", "count"],
      ["_sum", "sum"],
    ] as const) {
      for (const { labels, value } of samples.get(`${name}${part}`) ?? []) {
        const series = byLabels.get(labelsKey(labels));
        if (series) series[field] = value;
      }
    }
    scraped.set(name, [...byLabels.values()]);
    for (const part of ["_bucket", "_count", "_sum"]) scraped.delete(`${name}${part}`);
  }
  return scraped;
}

/** The sum of `name`'s series whose labels include `labels` (0 when none does). */
export function total(
  scraped: Map<string, Series[]>,
  name: string,
  labels: Record<string, string> = {},
): number {
  return (scraped.get(name) ?? [])
    .filter((series) => Object.entries(labels).every(([key, value]) => series.labels[key] === value))
    .reduce((sum, series) => sum + (series.value ?? series.count ?? 0), 0);
}
