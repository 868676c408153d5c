import type { GatewayRequestEvent } from "@agentnet/contracts";
import { STREAM_OUTPUT_STEP_TOKENS } from "@agentnet/gateway-proxy/estimate";
import { eventually } from "@agentnet/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicClient, clearOfHourEnd, configure, openaiClient, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});
// Counters and Retry-After are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

const DAY = 86_400;

describe("caps", () => {
  it("counts real usage and refuses what no longer fits with 429, its reason and Retry-After", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
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
    // The request names the counters it counts on, with the proxy lease that admitted it.
    expect(allowed?.reserved_counters?.map((c) => [c.dimension_kind, typeof c.lease_id])).toEqual([
      ["user", "string"],
      ["group", "undefined"],
    ]);
    await eventually(async () => (await userCounter(stack, account.token))?.tokens_input === 600);

    // 800 used + (prompt estimate + 300) > 1,000, and settled usage alone says so: wait for the window.
    const denied = await ask().catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 429, code: "budget_rule.token_cap_exceeded" });
    const retryAfter = Number((denied as { headers?: Headers }).headers?.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(2);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const events = await account.events.waitFor(2);
    expect(events[1]).toMatchObject({
      decision: "deny",
      deny_reason: "budget_rule.token_cap_exceeded",
      status_code: 429,
      input_tokens: 0,
      cost_usd: 0,
    });
    expect(events[1]?.reserved_counters).toBeUndefined();
  });

  it("never refuses back-to-back requests whose real use fits the cap (holds end with the answer)", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 300, window_seconds: 3600 },
    });
    stack.openai.usage = { input: 3, output: 1, cached: 0, creation: 0 };
    const client = openaiClient(stack, account.token);
    for (let i = 0; i < 12; i++) {
      await client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 30,
      });
    }
    const events = await account.events.waitFor(12);
    expect(events.every((event) => event.status_code === 200)).toBe(true);
  });

  it("says capacity returns shortly when the cap is held by requests in flight, not used", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 500, window_seconds: DAY },
    });
    stack.openai.usage = { input: 3, output: 1, cached: 0, creation: 0 };
    stack.openai.holdStream = true;
    const client = openaiClient(stack, account.token);
    const body = { model: "gpt-4o", messages: [{ role: "user" as const, content: "hi" }], max_tokens: 400 };
    const inFlight = await client.chat.completions.create({ ...body, stream: true });
    const denied = await client.chat.completions.create(body).catch((error: unknown) => error);
    stack.openai.holdStream = false;
    stack.openai.release();
    for await (const _ of inFlight) {
      // drain
    }
    expect(denied).toMatchObject({ status: 429 });
    expect((denied as { headers?: Headers }).headers?.get("retry-after")).toBe("2");
    await expect(client.chat.completions.create(body)).resolves.toMatchObject({ object: "chat.completion" });
  });

  it("a policy's USD cap refuses once the priced worst case would pass it", async () => {
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

describe("unpriced models", () => {
  it("are refused under a USD limit with a reason that tells the admin what to do", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.anthropicProvider.id]);
    await setup.budgetRule({
      budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: DAY },
    });
    const client = anthropicClient(stack, account.token);
    const denied = await client.messages
      .create({ model: "claude-opus-5-5", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 403 });
    expect(String((denied as Error).message)).toMatch(/pricing\.unknown_model.*|set its rates/);
    expect(String((denied as Error).message)).toContain("set its rates");
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({ decision: "deny", deny_reason: "pricing.unknown_model", status_code: 403 });
  });

  it("are served without a USD limit, token caps still counting them", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.anthropicProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 10_000, window_seconds: DAY },
    });
    stack.anthropic.usage = { input: 10, output: 5, cached: 0, creation: 0 };
    const client = anthropicClient(stack, account.token);
    await expect(
      client.messages.create({
        model: "claude-opus-5-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
      }),
    ).resolves.toMatchObject({ type: "message" });
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({ decision: "allow", cost_usd: 0, input_tokens: 10, output_tokens: 5 });
    await eventually(async () => (await userCounter(stack, account.token))?.tokens_output === 5);
  });
});

describe("streams under caps", () => {
  it("admits a burst of 30 agent-shaped streams (max_tokens 32,000) under a $1/day cap their real use fits", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.anthropicProvider.id]);
    await setup.budgetRule({
      budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: DAY },
    });
    stack.anthropic.usage = { input: 100, output: 20, cached: 0, creation: 0 };
    stack.anthropic.reply = "Done.";
    const client = anthropicClient(stack, account.token);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        client.messages
          .stream({
            model: "claude-opus-4-5",
            max_tokens: 32_000,
            messages: [{ role: "user", content: "fix the failing test" }],
          })
          .finalMessage(),
      ),
    );
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
  });

  it("cuts a stream at the cap in the vendor's format: the SDK ends normally, overshoot within one step", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.anthropicProvider.id]);
    const cap = 3_000;
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: cap, window_seconds: DAY },
    });
    stack.anthropic.usage = { input: 50, output: 20_000, cached: 0, creation: 0 };
    stack.anthropic.reply = Array.from({ length: 10_000 }, (_, i) => `w${i % 10}`).join(" ");
    const client = anthropicClient(stack, account.token);
    const message = await client.messages
      .stream({
        model: "claude-opus-4-5",
        max_tokens: 32_000,
        messages: [{ role: "user", content: "write" }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("max_tokens");
    const [event] = (await account.events.waitFor(1)) as GatewayRequestEvent[];
    expect(event).toMatchObject({
      decision: "allow",
      status_code: 200,
      deny_reason: "budget_rule.token_cap_exceeded",
      stream: true,
    });
    const charged = (event?.input_tokens ?? 0) + (event?.output_tokens ?? 0);
    expect(charged).toBeGreaterThan(cap / 2);
    expect(charged).toBeLessThanOrEqual(cap + STREAM_OUTPUT_STEP_TOKENS);
    await eventually(async () => ((await userCounter(stack, account.token))?.tokens_output ?? 0) > 0);
    const counter = await userCounter(stack, account.token);
    expect((counter?.tokens_input ?? 0) + (counter?.tokens_output ?? 0)).toBeLessThanOrEqual(
      cap + STREAM_OUTPUT_STEP_TOKENS,
    );
  });

  it("cuts an OpenAI chat stream with finish_reason length", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 2_000, window_seconds: DAY },
    });
    stack.openai.reply = Array.from({ length: 10_000 }, (_, i) => `w${i % 10}`).join(" ");
    const client = openaiClient(stack, account.token);
    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "write" }],
      stream: true,
    });
    let finish: string | null | undefined;
    for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe("length");
  });
});

describe("members see their caps", () => {
  it("lists the caps that apply to a member with limit, used, held and remaining", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.anthropicProvider.id], {
      limits: {
        token_limit: { enabled: true, group_cap: 50_000, user_cap: 0, window_seconds: DAY },
        budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: DAY },
      },
    });
    const rule = await setup.budgetRule({
      budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: DAY },
    });
    const member = await account.must(
      stack.api<{ id: string }>("POST", "/users", account.token, { email: `m-${rule.id}@example.com` }),
    );
    const { plain_token: token } = await account.must(
      stack.api<{ plain_token: string }>("POST", `/users/${member.id}/tokens`, account.token, {
        name: "agent",
        expires_in: 1,
      }),
    );
    stack.anthropic.usage = { input: 1_000, output: 1_000, cached: 0, creation: 0 };
    await anthropicClient(stack, token).messages.create({
      model: "claude-opus-4-5",
      max_tokens: 2_000,
      messages: [{ role: "user", content: "hi" }],
    });
    type Cap = {
      source: string;
      measure: string;
      dimension_kind: string;
      limit: number;
      used: number;
      remaining: number;
      held: number;
    };
    let caps: Cap[] = [];
    await eventually(async () => {
      caps = (await stack.api<Cap[]>("GET", "/agent-network/consumption/caps", token)).body;
      return caps.some((cap) => cap.used > 0 && cap.measure === "usd");
    });
    // $5/M in + $25/M out on Opus 4.5: $0.005 + $0.025.
    expect(caps).toContainEqual(
      expect.objectContaining({
        source: "budget_rule",
        measure: "usd",
        dimension_kind: "user",
        limit: 1,
        used: 0.03,
      }),
    );
    expect(caps).toContainEqual(
      expect.objectContaining({
        source: "llm_policy",
        measure: "tokens",
        dimension_kind: "group",
        limit: 50_000,
        used: 2_000,
      }),
    );
    for (const cap of caps) expect(cap.remaining).toBeCloseTo(cap.limit - cap.used - cap.held, 9);
  });
});
