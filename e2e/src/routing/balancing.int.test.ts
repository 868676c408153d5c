import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openaiClient } from "../setup";
import { type RoutingStack, startRoutingStack, usageByProvider } from "./routing-stack";

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack();
});
afterAll(() => routing?.stop());

/** Runs `count` calls, `parallel` at a time. */
async function inWaves(count: number, parallel: number, call: (i: number) => Promise<unknown>) {
  for (let start = 0; start < count; start += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, count - start) }, (_, i) => call(start + i)));
  }
}

describe("load balancing over providers that serve the same model", () => {
  it("weighted 3:1 splits 400 requests within 5 points of 75/25, each counted at its provider", async () => {
    // Both vendors are healthy: the "failing" one is given nothing to fail.
    const { account, first, second } = await routing.twoProviders("openai", {
      routing: (first, second) => ({ strategy: "weighted", weights: { [first.id]: 3, [second.id]: 1 } }),
    });
    const seenBefore = {
      first: routing.failing.openai.seen.length,
      second: routing.healthy.openai.seen.length,
    };
    const client = openaiClient(routing.stack, account.token);

    await inWaves(400, 10, (i) =>
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: `q${i}` }] }),
    );

    const atFirst = routing.failing.openai.seen.length - seenBefore.first;
    const atSecond = routing.healthy.openai.seen.length - seenBefore.second;
    expect(atFirst + atSecond).toBe(400);
    expect(atFirst / 400).toBeGreaterThanOrEqual(0.7);
    expect(atFirst / 400).toBeLessThanOrEqual(0.8);
    const byProvider = await usageByProvider(routing, account, 400);
    expect(Object.fromEntries(byProvider.map((row) => [row.key, row.requests]))).toEqual({
      [first.id]: atFirst,
      [second.id]: atSecond,
    });
  });

  it("least_busy sends requests past a provider that is busy with a slow one", async () => {
    const { account } = await routing.twoProviders("openai", { routing: () => ({ strategy: "least_busy" }) });
    routing.failing.openai.failNext(1, { kind: "slow_first_byte", delayMs: 5_000 });
    const seenBefore = {
      first: routing.failing.openai.seen.length,
      second: routing.healthy.openai.seen.length,
    };
    const client = openaiClient(routing.stack, account.token);

    // Both idle: the first in order takes it, and holds it for 5 s.
    const slow = client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "slow" }],
    });
    await waitUntil(() => routing.failing.openai.seen.length > seenBefore.first);
    for (let i = 0; i < 5; i++)
      await client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: `q${i}` }],
      });
    await slow;

    expect(routing.failing.openai.seen.length - seenBefore.first).toBe(1);
    expect(routing.healthy.openai.seen.length - seenBefore.second).toBe(5);
  });
});

async function waitUntil(done: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("waited in vain");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
