import type { GatewayRequestEvent } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startProxyProcess } from "../proxy-process";
import { clearOfHourEnd, configure, openaiClient, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

const LEASE_TTL_MS = 3_000;
let stack: Stack;
let second: Awaited<ReturnType<typeof startProxyProcess>>;
beforeAll(async () => {
  // A short ack wait: events the killed leader had pulled but not acked come again sooner.
  stack = await startStack({ consumption: { quotaLeaseTtlMs: LEASE_TTL_MS, ackWaitMs: 3_000 } });
  second = await startProxyProcess(stack.vendorUpstreams);
});
afterAll(async () => {
  await second?.stop();
  await stack?.stop();
});
// Counters and Retry-After are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

const served = (events: GatewayRequestEvent[]) => events.filter((event) => event.status_code === 200);
const sum = (events: GatewayRequestEvent[], pick: (event: GatewayRequestEvent) => number) =>
  events.reduce((total, event) => total + pick(event), 0);
/** ~105 prompt tokens by the proxy's estimate; the fake vendor reports 100 in, 20 out. */
const PROMPT = "p".repeat(400);

describe("caps over two proxy processes", () => {
  it("50 concurrent requests at a token cap and at a USD cap: 0 overshoot", async () => {
    for (const limit of ["tokens", "usd"] as const) {
      const account = await stack.newAccount();
      const setup = configure(stack, account);
      await setup.policy([account.openaiProvider.id]);
      await setup.budgetRule(
        limit === "tokens"
          ? { token_limit: { enabled: true, group_cap: 0, user_cap: 1_500, window_seconds: 3600 } }
          : { budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 0.003, window_seconds: 3600 } },
      );
      stack.openai.usage = { input: 100, output: 20, cached: 0, creation: 0 };
      const clients = [
        openaiClient(stack, account.token),
        new OpenAI({ apiKey: account.token, baseURL: `${second.url}/v1`, maxRetries: 0 }),
      ];
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          (clients[i % 2] as OpenAI).chat.completions.create({
            model: "gpt-4o",
            messages: [{ role: "user", content: PROMPT }],
            max_tokens: 30,
          }),
        ),
      );
      const answered = results.filter((result) => result.status === "fulfilled").length;
      const events = await account.events.waitFor(50);
      const ok = served(events);
      expect(ok).toHaveLength(answered);
      // Both proxies served some, and the refusals are cap refusals.
      expect(answered).toBeGreaterThan(3);
      expect(events.filter((e) => e.status_code !== 200).every((e) => e.status_code === 429)).toBe(true);
      if (limit === "tokens") {
        expect(sum(ok, (e) => e.input_tokens + e.output_tokens)).toBeLessThanOrEqual(1_500);
      } else {
        expect(sum(ok, (e) => e.cost_usd)).toBeLessThanOrEqual(0.003 + 1e-12);
      }
      await eventually(
        async () => (await userCounter(stack, account.token))?.tokens_input === 100 * answered,
      );
    }
  });
});

describe("consumption going away mid-traffic", () => {
  it("serves within the leases, then fails closed; after restart the counters are exact", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 1_000_000, window_seconds: 3600 },
    });
    stack.openai.usage = { input: 10, output: 5, cached: 0, creation: 0 };
    const client = openaiClient(stack, account.token);
    const statuses: number[] = [];
    const ask = async () => {
      const status = await client.chat.completions
        .create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], max_tokens: 20 })
        .then(
          () => 200,
          (error: { status?: number }) => error.status ?? 0,
        );
      statuses.push(status);
      return status;
    };
    expect(await ask()).toBe(200);

    await stack.crashConsumption();
    // Within the lease: still served.
    expect(await ask()).toBe(200);
    expect(await ask()).toBe(200);
    // Once the lease has run out, refused: the caps cannot be checked.
    await new Promise((resolve) => setTimeout(resolve, LEASE_TTL_MS + 200));
    expect(await ask()).toBe(503);

    await stack.restartConsumption();
    // Once the dead leader's leadership has lapsed, the new one grants as soon as the old leases
    // can no longer be in use.
    await eventually(async () => (await ask()) === 200, 20_000);
    const events = await account.events.waitFor(statuses.length);
    const ok = served(events);
    expect(ok).toHaveLength(statuses.filter((status) => status === 200).length);
    await eventually(
      async () => (await userCounter(stack, account.token))?.tokens_input === 10 * ok.length,
      15_000,
    );
    expect(await userCounter(stack, account.token)).toMatchObject({
      tokens_input: 10 * ok.length,
      tokens_output: 5 * ok.length,
    });
  });
});
