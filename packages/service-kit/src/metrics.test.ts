import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BoundCounter, BoundHistogram, countedElsewhere, gaugeOf, metricsSettings } from "./metrics";

/** The value of `name{labels}` in the registry's exposition, or undefined when absent. */
async function scraped(registry: Registry, series: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split("\n").find((text) => text.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("BoundCounter", () => {
  it("shows at each scrape what its bound series counted, each under its own labels", async () => {
    const registry = new Registry();
    const counter = new BoundCounter(registry, { name: "jobs_total", help: "jobs", labelNames: ["kind"] });
    const sweep = counter.bind({ kind: "sweep" });
    const prune = counter.bind({ kind: "prune" });
    sweep.value += 2;
    expect(await scraped(registry, 'jobs_total{kind="sweep"}')).toBe(2);
    expect(await scraped(registry, 'jobs_total{kind="prune"}')).toBeUndefined();
    sweep.value++;
    prune.value += 0.25;
    expect(await scraped(registry, 'jobs_total{kind="sweep"}')).toBe(3);
    expect(await scraped(registry, 'jobs_total{kind="prune"}')).toBe(0.25);
  });

  it("adds up two series bound to the same labels", async () => {
    const registry = new Registry();
    const counter = new BoundCounter(registry, { name: "jobs_total", help: "jobs", labelNames: ["kind"] });
    counter.bind({ kind: "sweep" }).value += 2;
    counter.bind({ kind: "sweep" }).value += 5;
    expect(await scraped(registry, 'jobs_total{kind="sweep"}')).toBe(7);
  });
});

describe("BoundHistogram", () => {
  it("reads at a scrape as a Prometheus histogram: cumulative buckets up to +Inf, sum and count", async () => {
    const registry = new Registry();
    const histogram = new BoundHistogram(registry, {
      name: "wait_seconds",
      help: "waits",
      labelNames: ["stream"],
      buckets: [1, 0.1],
    });
    const whole = histogram.bind({ stream: "false" });
    for (const seconds of [0.05, 0.1, 0.5, 3]) whole.observe(seconds);
    histogram.bind({ stream: "true" }).observe(0.2);

    expect(await scraped(registry, 'wait_seconds_bucket{stream="false",le="0.1"}')).toBe(2);
    expect(await scraped(registry, 'wait_seconds_bucket{stream="false",le="1"}')).toBe(3);
    expect(await scraped(registry, 'wait_seconds_bucket{stream="false",le="+Inf"}')).toBe(4);
    expect(await scraped(registry, 'wait_seconds_sum{stream="false"}')).toBeCloseTo(3.65, 9);
    expect(await scraped(registry, 'wait_seconds_count{stream="false"}')).toBe(4);
    expect(await scraped(registry, 'wait_seconds_bucket{stream="true",le="0.1"}')).toBe(0);
    expect(await scraped(registry, 'wait_seconds_bucket{stream="true",le="1"}')).toBe(1);
    expect(await registry.metrics()).toMatch(/^# TYPE wait_seconds histogram$/m);
  });
});

describe("metrics read at scrape time", () => {
  it("a count kept elsewhere grows by what it gained since the last scrape", async () => {
    const registry = new Registry();
    let published = 4;
    countedElsewhere(registry, { name: "published_total", help: "published" }, () => published);
    expect(await scraped(registry, "published_total")).toBe(4);
    published = 10;
    expect(await scraped(registry, "published_total")).toBe(10);
  });

  it("a gauge shows what its reader says now", async () => {
    const registry = new Registry();
    let buffered = 7;
    gaugeOf(registry, { name: "buffered", help: "buffered" }, () => buffered);
    expect(await scraped(registry, "buffered")).toBe(7);
    buffered = 0;
    expect(await scraped(registry, "buffered")).toBe(0);
  });
});

describe("metricsSettings", () => {
  it("keeps no metrics without a port, and binds where AGN_METRICS_HOST says with one", () => {
    expect(metricsSettings({ AGN_METRICS_HOST: "127.0.0.1" })).toBeUndefined();
    expect(metricsSettings({ AGN_METRICS_PORT: 9464, AGN_METRICS_HOST: "0.0.0.0" })).toEqual({
      port: 9464,
      host: "0.0.0.0",
    });
  });
});
