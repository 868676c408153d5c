import type { Provider } from "@agentnet/contracts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { unavailable } from "../failing-vendor";
import { clearOfHourEnd, configure, openaiClient } from "../setup";
import { counterOnceCharged, type RoutingStack, rowsOnceStored, startRoutingStack } from "./routing-stack";

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack();
});
afterAll(() => routing?.stop());
// Caps are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);
beforeEach(() => routing.failing.openai.recover());

/** gpt-4o at the catalog's prices, then at a hundred times them on the fallback. */
const CHEAP = { id: "gpt-4o", input_per_1k: 0.0025, output_per_1k: 0.01 };
const DEAR = { id: "gpt-4o", input_per_1k: 0.25, output_per_1k: 1 };

/**
 * An account whose policy grants a cheap provider at the failing vendor, then a dear one at the
 * healthy vendor, under a daily USD cap per user.
 */
async function cheapThenDear(userCapUsd: number) {
  const { stack } = routing;
  const account = await stack.newAccount();
  const provider = (name: string, base: string, model: typeof CHEAP) =>
    account.must(
      stack.api<Provider>("POST", "/agent-network/providers", account.token, {
        provider_id: "openai_api",
        name,
        upstream_url: `${base}/v1`,
        api_key: "sk-upstream-openai",
        models: [model],
      }),
    );
  const cheap = await provider("cheap", routing.failingUrls.openai, CHEAP);
  const dear = await provider("dear", stack.openaiUrl, DEAR);
  const setup = configure(stack, account);
  await setup.policy([cheap.id, dear.id]);
  await setup.budgetRule({
    budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: userCapUsd, window_seconds: 86_400 },
  });
  return { account, cheap, dear };
}

describe("a fallback to a provider with other prices, under a USD cap", () => {
  it("is charged once, at the prices of the provider that answered", async () => {
    const { account, dear } = await cheapThenDear(100);
    routing.failing.openai.failNext(1, unavailable);
    routing.healthy.openai.usage = { input: 1_000, output: 200, cached: 0, creation: 0 };
    const client = openaiClient(routing.stack, account.token);

    await client.chat.completions.create({
      model: "gpt-4o",
      max_tokens: 1_000,
      messages: [{ role: "user", content: "hi" }],
    });

    // 1,000 × $0.25/1k + 200 × $1/1k at the dear provider.
    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ resolved_provider_id: dear.id, cost_usd: 0.45 });
    expect(await counterOnceCharged(routing, account, 1_000)).toMatchObject({
      tokens_input: 1_000,
      tokens_output: 200,
      cost_usd: expect.closeTo(0.45, 9),
    });
  });

  it("re-prices the hold: a cap that covers the request at the first provider but not at the second refuses it", async () => {
    // 5,000 output tokens held: $0.05 at the cheap provider, $5 at the dear one, under a $1 cap.
    const { account } = await cheapThenDear(1);
    routing.failing.openai.failNext(1, unavailable);
    const seenByCheap = routing.failing.openai.seen.length;
    const seenByDear = routing.healthy.openai.seen.length;
    const client = openaiClient(routing.stack, account.token);

    await expect(
      client.chat.completions.create({
        model: "gpt-4o",
        max_tokens: 5_000,
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 429 });
    // Admitted at the cheap provider's prices, refused at the dear one's before it was sent there.
    expect(routing.failing.openai.seen.length - seenByCheap).toBe(1);
    expect(routing.healthy.openai.seen.length).toBe(seenByDear);

    const { rows, total } = await rowsOnceStored(routing, account, 1);
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({ status_code: 429, cost_usd: 0 });
  });
});
