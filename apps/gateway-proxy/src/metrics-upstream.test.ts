import { createMetricsRegistry } from "@agentnet/service-kit";
import { describe, expect, it } from "vitest";
import { MAX_NAMED_ORIGINS, UpstreamMetrics } from "./metrics-upstream";
import { OriginSlots } from "./upstream/origin-slots";
import type { Upstream } from "./upstream/pools";

/** Upstreams at `count` hosts, one request in flight at each. */
const upstreamsAt = (count: number) =>
  Array.from({ length: count }, (_, index) => {
    const slots = new OriginSlots(10);
    slots.tryTake();
    return { host: `vendor-${index}.example`, slots } as Pick<Upstream, "host" | "slots">;
  });

describe("the upstream metrics' origin label", () => {
  it("names the first hosts seen and counts every later one as other, in the gauges too", async () => {
    const registry = createMetricsRegistry("gateway-proxy");
    const metrics = new UpstreamMetrics(registry);
    const upstreams = upstreamsAt(MAX_NAMED_ORIGINS + 10);
    metrics.follow({ list: () => (upstreams as Upstream[]).values(), connectionsPerOrigin: 10 });
    const gauge = await registry.getSingleMetric("agentnet_proxy_upstream_requests_in_flight")?.get();
    const labels = gauge?.values.map((value) => String(value.labels.origin)) ?? [];
    expect(labels).toHaveLength(MAX_NAMED_ORIGINS + 1);
    expect(gauge?.values.find((value) => value.labels.origin === "other")?.value).toBe(10);
    // A host first seen by the gauges keeps its label in the counters, and a later one is "other".
    metrics.origin("vendor-0.example").refused.value++;
    metrics.origin("vendor-59.example").refused.value++;
    const refused = await registry.getSingleMetric("agentnet_proxy_upstream_busy_total")?.get();
    expect(refused?.values.map((value) => value.labels.origin).sort()).toEqual(["other", "vendor-0.example"]);
  });
});
