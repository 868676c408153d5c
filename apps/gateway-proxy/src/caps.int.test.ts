import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, openaiClient, waitUntil } from "./test-support/setup";
import { type ProxyStack, startProxyStack } from "./test-support/stack";

let stack: ProxyStack;
beforeAll(async () => {
  stack = await startProxyStack();
});
afterAll(async () => {
  await stack?.stop();
});

type Counter = { dimension_kind: string; tokens_input: number; tokens_output: number; cost_usd: number };

describe("caps", () => {
  it("a budget rule's token cap settles real usage and denies the next request with 429 + Retry-After", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    const rule = await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 1_000, window_seconds: 3600 },
    });
    stack.openai.usage = { input: 600, output: 200, cached: 0, creation: 0 };
    const client = openaiClient(stack, account.token);
    const ask = () =>
      client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 300,
      });

    await ask();
    const [allowed] = await account.events.waitFor(1);
    expect(allowed?.reservation_id).toBeTruthy();

    // Consumption settles the reservation from the event: the counter holds the real 600 + 200.
    let counters: Counter[] = [];
    await waitUntil(async () => {
      counters = (await stack.api<Counter[]>("GET", "/agent-network/consumption", account.token)).body;
      return counters.some((c) => c.tokens_input === 600 && c.tokens_output === 200);
    });
    expect(counters.find((c) => c.dimension_kind === "user")).toMatchObject({
      tokens_input: 600,
      tokens_output: 200,
    });

    // 800 used + (prompt estimate + 300) > 1,000.
    const denied = await ask().catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 429, code: "budget_rule.token_cap_exceeded" });
    const retryAfter = Number((denied as { headers?: Headers }).headers?.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const events = await account.events.waitFor(2);
    expect(events[1]).toMatchObject({
      decision: "deny",
      deny_reason: "budget_rule.token_cap_exceeded",
      status_code: 429,
      input_tokens: 0,
      cost_usd: 0,
    });
    expect(events[1]?.reservation_id).toBeUndefined();
    expect(rule.id).toBeTruthy();
  });

  it("a policy's USD cap denies once the priced estimate would pass it", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id], {
      limits: {
        token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
        budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 0.01, window_seconds: 3600 },
      },
    });
    const client = openaiClient(stack, account.token);
    // gpt-4o: 2,000 output tokens × $10/M = $0.02 > $0.01 before anything is used.
    const denied = await client.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], max_tokens: 2_000 })
      .catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 429, code: "llm_policy.budget_cap_exceeded" });
    await expect(
      client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 100,
      }),
    ).resolves.toMatchObject({ object: "chat.completion" });
  });
});
