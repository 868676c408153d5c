import type { Provider } from "@agentnet/contracts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { unavailable } from "../failing-vendor";
import { scrape, total } from "../metrics";
import { openaiClient, readUntil } from "../setup";
import { type RoutingStack, rowsOnceStored, startRoutingStack } from "./routing-stack";

/**
 * Three failures within 10 s cool a provider down for 4 s: room for a loaded machine to send the
 * requests that must find it cooling.
 */
const COOLDOWN = { failures: 3, windowMs: 10_000, cooldownMs: 4_000 };

/** Heartbeats every 250 ms, not 10 s: the control-plane hears of a cooldown well within it. */
const HEARTBEAT_MS = 250;

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack({
    proxy: { cooldown: COOLDOWN, heartbeatMs: HEARTBEAT_MS },
    metrics: true,
  });
});
afterAll(() => routing?.stop());
beforeEach(() => routing.failing.openai.recover());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ProxyStatus {
  cooling_providers?: { provider_id: string; provider: string; cooling_until: string; last_error: string }[];
}

/** The proxy's gauge of providers cooling down. */
async function coolingGauge(): Promise<number> {
  const url = routing.stack.metricsUrls?.proxy;
  if (!url) throw new Error("the stack started without metrics");
  return total(await scrape(url), "agentnet_proxy_providers_cooling_down");
}

async function proxyStatus(): Promise<ProxyStatus> {
  const response = await fetch(`${routing.stack.proxy.url}/status`);
  return (await response.json()) as ProxyStatus;
}

describe("a provider that keeps failing cools down, then is probed again", () => {
  it("is skipped after three failures (GET /status and a gauge say so), probed after the cooldown, and serves again once it answers", async () => {
    const { account, first, second } = await routing.twoProviders("openai");
    const vendor = routing.failing.openai;
    vendor.failAlways(unavailable);
    const client = openaiClient(routing.stack, account.token);
    const ask = () =>
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    const reachedFirst = async (requests: number) => {
      const before = vendor.seen.length;
      for (let i = 0; i < requests; i++) await ask();
      return vendor.seen.length - before;
    };

    expect(await reachedFirst(COOLDOWN.failures)).toBe(COOLDOWN.failures);
    // Cooling down: tried last, so the healthy provider answers alone.
    expect(await reachedFirst(5)).toBe(0);
    expect((await proxyStatus()).cooling_providers).toEqual([
      expect.objectContaining({ provider_id: first.id, provider: first.name, last_error: "status 503" }),
    ]);
    expect(await coolingGauge()).toBe(1);

    // After the cooldown one request probes it; still failing, it cools down again.
    await sleep(COOLDOWN.cooldownMs + 300);
    expect(await reachedFirst(1)).toBe(1);
    expect(await reachedFirst(3)).toBe(0);

    // The next probe finds it answering: it is the first choice again.
    vendor.recover();
    await sleep(COOLDOWN.cooldownMs + 300);
    expect(await reachedFirst(3)).toBe(3);
    expect((await proxyStatus()).cooling_providers ?? []).toEqual([]);
    expect(await coolingGauge()).toBe(0);

    const total = COOLDOWN.failures + 5 + 1 + 3 + 3;
    const { rows } = await rowsOnceStored(routing, account, total);
    expect(rows).toHaveLength(total);
    expect(rows.map((row) => row.resolved_provider_id)).toEqual([
      ...Array(total - 3).fill(second.id),
      ...Array(3).fill(first.id),
    ]);
  }, 60_000);

  it("a 429 whose retry-after outlasts the cooldown cools the provider down at once", async () => {
    const { account } = await routing.twoProviders("openai");
    const vendor = routing.failing.openai;
    vendor.failNext(1, { kind: "status", status: 429, retryAfterSeconds: 60 });
    const client = openaiClient(routing.stack, account.token);
    const before = vendor.seen.length;

    for (let i = 0; i < 4; i++)
      await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    expect(vendor.seen.length - before).toBe(1);
  });
});

describe("the provider read shows the cooldown", () => {
  it("says until when and the last error while the proxy tries the provider last, and nothing once the cooldown is over", async () => {
    const { account, first, second } = await routing.twoProviders("openai");
    routing.failing.openai.failAlways(unavailable);
    const client = openaiClient(routing.stack, account.token);
    const failingFrom = Date.now();
    for (let i = 0; i < COOLDOWN.failures; i++)
      await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    const cooledAt = Date.now();

    // As a user reads it: through the API, with the account's token.
    const read = () =>
      account.must(routing.stack.api<Provider>("GET", `/agent-network/providers/${first.id}`, account.token));
    const cooling = await readUntil(read, (provider) => provider.cooldown !== undefined);
    expect(cooling.cooldown).toEqual({ until: expect.any(String), last_error: "status 503" });
    const until = Date.parse(cooling.cooldown?.until ?? "");
    expect(until).toBeGreaterThanOrEqual(failingFrom + COOLDOWN.cooldownMs);
    expect(until).toBeLessThanOrEqual(cooledAt + COOLDOWN.cooldownMs);

    const listed = await account.must(
      routing.stack.api<Provider[]>("GET", "/agent-network/providers", account.token),
    );
    expect(listed.find((provider) => provider.id === first.id)?.cooldown).toEqual(cooling.cooldown);
    expect(listed.find((provider) => provider.id === second.id)?.cooldown).toBeUndefined();

    // No request probes it meanwhile: the proxy still holds it for the probe, but its time is over.
    const over = await readUntil(
      read,
      (provider) => provider.cooldown === undefined,
      COOLDOWN.cooldownMs + 5_000,
    );
    expect(over.cooldown).toBeUndefined();
    expect(Date.now()).toBeGreaterThanOrEqual(until);
  }, 30_000);
});
