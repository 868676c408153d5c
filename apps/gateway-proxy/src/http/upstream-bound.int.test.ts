import { createMetricsRegistry, type MetricsRegistry } from "@agentnet/service-kit";
import { eventually } from "@agentnet/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { UPSTREAM_BUSY } from "../request/upstream-slot";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { answerOf, keptEvents, streamedRequest } from "../test-support/requests";
import { ANSWER_USAGE, ScriptedVendor } from "../test-support/vendor";

let harness: ProxyHarness | undefined;
const vendors: ScriptedVendor[] = [];

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await Promise.all(vendors.splice(0).map((vendor) => vendor.stop()));
});

/** A vendor holding every stream open after its first event until released. */
async function holdingVendor(): Promise<{ vendor: ScriptedVendor; url: string }> {
  const vendor = new ScriptedVendor();
  vendor.always = { kind: "hold" };
  vendors.push(vendor);
  return { vendor, url: await vendor.start() };
}

const openai = (url: string) => ({ provider_id: "openai_api", upstream_url: `${url}/v1`, key: "sk-test" });
const anthropic = (url: string) => ({ provider_id: "anthropic_api", upstream_url: url, key: "sk-ant" });

/** The value of a counter's series in a scrape; 0 when absent. */
async function scraped(registry: MetricsRegistry, series: string): Promise<number> {
  const line = (await registry.metrics()).split("\n").find((row) => row.startsWith(series));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe("1,000 streams at once to one upstream origin through one proxy", () => {
  it("runs them all at once: the vendor holds 1,000 open together, then each ends 200 with its usage and its row", async () => {
    const kept = keptEvents();
    harness = await startProxyHarness("bound-thousand", { publish: kept.publish });
    const { vendor, url } = await holdingVendor();
    const { accountId, token } = harness.accountWith([openai(url)]);
    const streams = 1_000;
    const startedAt = performance.now();
    const rssBefore = process.memoryUsage().rss;
    const answers = Array.from({ length: streams }, () =>
      answerOf(streamedRequest(harness?.proxy.url ?? "", token, "openai")),
    );
    await eventually(() => vendor.open === streams, 35_000);
    const rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    vendor.release();
    const answered = await Promise.all(answers);
    const seconds = (performance.now() - startedAt) / 1000;

    expect(vendor.mostOpen).toBe(streams);
    expect(answered.filter((answer) => answer.status === 200 && answer.body.includes("[DONE]"))).toHaveLength(
      streams,
    );
    await eventually(() => kept.of(accountId).length === streams, 20_000);
    const rows = kept.of(accountId);
    expect(rows.every((row) => row.status_code === 200 && row.deny_reason === "")).toBe(true);
    expect(rows.every((row) => row.input_tokens === ANSWER_USAGE.input)).toBe(true);
    expect(rows.every((row) => row.output_tokens === ANSWER_USAGE.output)).toBe(true);
    // The clients, the proxy and the vendor share this process: all three are in the growth.
    expect(rssGrowthMb).toBeLessThan(600);
    expect(seconds).toBeLessThan(40);
    console.info(
      `${streams} concurrent streams: all open together, ${seconds.toFixed(1)} s, rss +${rssGrowthMb.toFixed(0)} MB`,
    );
  }, 90_000);
});

describe("an upstream origin at its bound", () => {
  const BOUND = 20;
  const WAIT_MS = 300;

  it("answers a request past it in its wire's overloaded shape with retry-after once the wait is over, rows it and counts it", async () => {
    const kept = keptEvents();
    const registry = createMetricsRegistry("gateway-proxy");
    harness = await startProxyHarness(
      "bound-refused",
      { connectionsPerOrigin: BOUND, upstreamWaitMs: WAIT_MS, publish: kept.publish },
      registry,
    );
    const proxyUrl = harness.proxy.url;
    const { vendor, url } = await holdingVendor();
    const first = harness.accountWith([openai(url)]);
    const second = harness.accountWith([anthropic(url)]);
    const running = Array.from({ length: BOUND }, () =>
      answerOf(streamedRequest(proxyUrl, first.token, "openai")),
    );
    await eventually(() => vendor.open === BOUND);

    const startedAt = performance.now();
    const past = await Promise.all([
      ...Array.from({ length: 5 }, () => answerOf(streamedRequest(proxyUrl, first.token, "openai"))),
      ...Array.from({ length: 5 }, () => answerOf(streamedRequest(proxyUrl, second.token, "anthropic"))),
    ]);
    const waitedMs = performance.now() - startedAt;
    expect(waitedMs).toBeGreaterThanOrEqual(WAIT_MS - 20);
    expect(waitedMs).toBeLessThan(WAIT_MS + 3_000);
    for (const answer of past.slice(0, 5)) {
      expect(answer).toMatchObject({ status: 503, retryAfter: "1" });
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: UPSTREAM_BUSY, type: "api_error" } });
    }
    for (const answer of past.slice(5)) {
      expect(answer).toMatchObject({ status: 529, retryAfter: "1" });
      expect(JSON.parse(answer.body)).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    }
    expect(vendor.seen).toHaveLength(BOUND);

    vendor.release();
    expect((await Promise.all(running)).map((answer) => answer.status)).toEqual(Array(BOUND).fill(200));
    await eventually(
      () => kept.of(first.accountId).length === BOUND + 5 && kept.of(second.accountId).length === 5,
    );
    const refusedRows = kept.events.filter((row) => row.deny_reason === UPSTREAM_BUSY);
    expect(refusedRows.map((row) => row.status_code).sort()).toEqual([
      ...Array(5).fill(503),
      ...Array(5).fill(529),
    ]);
    expect(refusedRows.every((row) => row.total_tokens === 0 && row.cost_usd === 0)).toBe(true);

    const origin = new URL(url).host;
    expect(await scraped(registry, `agentnet_proxy_upstream_busy_total{origin="${origin}"`)).toBe(10);
    expect(
      await scraped(registry, `agentnet_proxy_upstream_slot_wait_seconds_count{origin="${origin}"`),
    ).toBe(10);
    expect(await scraped(registry, "agentnet_proxy_upstream_requests_limit")).toBe(BOUND);
  }, 30_000);

  it("gives a waiting request the slot a finished stream frees", async () => {
    const registry = createMetricsRegistry("gateway-proxy");
    harness = await startProxyHarness(
      "bound-waited",
      { connectionsPerOrigin: BOUND, upstreamWaitMs: 5_000 },
      registry,
    );
    const proxyUrl = harness.proxy.url;
    const { vendor, url } = await holdingVendor();
    const { token } = harness.accountWith([openai(url)]);
    const running = Array.from({ length: BOUND }, () => answerOf(streamedRequest(proxyUrl, token, "openai")));
    await eventually(() => vendor.open === BOUND);
    const waiting = answerOf(streamedRequest(proxyUrl, token, "openai"));
    const origin = new URL(url).host;
    await eventually(
      async () =>
        (await scraped(registry, `agentnet_proxy_upstream_requests_waiting{origin="${origin}"`)) === 1,
    );
    vendor.always = { kind: "answer" };
    vendor.release();
    expect((await waiting).status).toBe(200);
    expect((await Promise.all(running)).every((answer) => answer.status === 200)).toBe(true);
    expect(
      await scraped(registry, `agentnet_proxy_upstream_slot_wait_seconds_count{origin="${origin}"`),
    ).toBe(1);
    expect(await scraped(registry, `agentnet_proxy_upstream_busy_total{origin="${origin}"`)).toBe(0);
  }, 30_000);

  it("sends a request past it to the next provider on another origin at once, cooling nobody down", async () => {
    const kept = keptEvents();
    harness = await startProxyHarness("bound-elsewhere", {
      connectionsPerOrigin: BOUND,
      upstreamWaitMs: 10_000,
      publish: kept.publish,
    });
    const proxyUrl = harness.proxy.url;
    const busy = await holdingVendor();
    const spare = new ScriptedVendor("from-spare");
    vendors.push(spare);
    const spareUrl = await spare.start();
    const { accountId, token, providers } = harness.accountWith([openai(busy.url), openai(spareUrl)]);
    const running = Array.from({ length: BOUND }, () => answerOf(streamedRequest(proxyUrl, token, "openai")));
    await eventually(() => busy.vendor.open === BOUND);

    const startedAt = performance.now();
    const moved = await answerOf(streamedRequest(proxyUrl, token, "openai"));
    expect(moved.status).toBe(200);
    expect(moved.body).toContain("from-spare");
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    await eventually(() => kept.of(accountId).length === 1);
    expect(
      kept.of(accountId)[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status, attempt.error]),
    ).toEqual([
      [providers[0]?.id, 503, UPSTREAM_BUSY],
      [providers[1]?.id, 200, ""],
    ]);
    const status = (await (await fetch(`${proxyUrl}/status`)).json()) as { cooling_providers: unknown[] };
    expect(status.cooling_providers).toEqual([]);

    busy.vendor.release();
    expect((await Promise.all(running)).every((answer) => answer.status === 200)).toBe(true);
  }, 30_000);
});
