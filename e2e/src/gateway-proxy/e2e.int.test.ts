import type {
  AccessLogPage,
  AccessLogSessionPage,
  ConsumptionCounter,
  UsageBucket,
} from "@agentnet/contracts";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clearOfHourEnd, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ telemetry: true });
});
afterAll(async () => {
  await stack?.stop();
});
// Counters and Retry-After are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

describe("configure through the API, call through the SDKs, read everything back through the API", () => {
  it("logs, sessions, usage and consumption agree with what the upstreams reported, to the cent", async () => {
    const account = await stack.newAccount();
    const all = account.owner.group_ids[0];
    await account.must(
      stack.api("POST", "/agent-network/policies", account.token, {
        name: "everyone",
        source_groups: [all],
        destination_provider_ids: [account.openaiProvider.id, account.anthropicProvider.id],
      }),
    );
    await account.must(
      stack.api("POST", "/agent-network/budget-rules", account.token, {
        name: "daily tokens",
        limits: {
          token_limit: { enabled: true, group_cap: 0, user_cap: 10_000_000, window_seconds: 86_400 },
          budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 0 },
        },
      }),
    );

    const openai = new OpenAI({ apiKey: account.token, baseURL: `${stack.proxy.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: account.token, baseURL: stack.proxy.url, maxRetries: 0 });
    const session = { headers: { "x-session-id": "e2e-session" } };

    // gpt-4o: (200k − 120k) × $2.50/M + 120k × $1.25/M + 30k × $10/M = $0.65
    stack.openai.usage = { input: 200_000, output: 30_000, cached: 120_000, creation: 0 };
    await openai.chat.completions.create(
      { model: "gpt-4o", messages: [{ role: "user", content: "one" }], max_tokens: 50_000 },
      session,
    );
    // gpt-4o-mini: 10k × $0.15/M + 2k × $0.60/M = $0.0027
    stack.openai.usage = { input: 10_000, output: 2_000, cached: 0, creation: 0 };
    await openai.chat.completions.create(
      { model: "gpt-4o-mini", messages: [{ role: "user", content: "two" }], max_tokens: 5_000 },
      session,
    );
    // claude-sonnet-4-5: 10k × $3/M + 20k cache read × $0.30/M + 10k cache write × $3.75/M + 5k × $15/M = $0.1485
    stack.anthropic.usage = { input: 10_000, output: 5_000, cached: 20_000, creation: 10_000 };
    await anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 8_000,
      messages: [{ role: "user", content: "three" }],
    });

    const logs = await readUntil(
      () =>
        account.must(
          stack.api<AccessLogPage>("GET", "/agent-network/access-logs?sort_order=ascending", account.token),
        ),
      (page) => page.data.length === 3 && page.total_records === 3,
    );
    expect(logs.total_records).toBe(3);
    expect(logs.data.map((entry) => [entry.model, entry.provider, entry.decision, entry.session_id])).toEqual(
      [
        ["gpt-4o", "OpenAI", "allow", "e2e-session"],
        ["gpt-4o-mini", "OpenAI", "allow", "e2e-session"],
        ["claude-sonnet-4-5", "Claude", "allow", ""],
      ],
    );
    expect(logs.data.map((entry) => entry.cost_usd)).toEqual([0.65, 0.0027, 0.1485]);
    expect(logs.data[2]).toMatchObject({
      input_tokens: 10_000,
      cached_input_tokens: 20_000,
      cache_creation_tokens: 10_000,
      cache_cost_usd: 0.0435,
    });

    const sessions = await account.must(
      stack.api<AccessLogSessionPage>(
        "GET",
        "/agent-network/access-log-sessions?sort_by=started_at&sort_order=ascending",
        account.token,
      ),
    );
    expect(sessions.total_records).toBe(2);
    expect(sessions.data[0]).toMatchObject({
      session_id: "e2e-session",
      request_count: 2,
      input_tokens: 210_000,
      output_tokens: 32_000,
      cached_input_tokens: 120_000,
      cost_usd: 0.6527,
      models: expect.arrayContaining(["gpt-4o", "gpt-4o-mini"]),
    });
    expect(sessions.data[0]?.entries.map((entry) => entry.model)).toEqual(["gpt-4o", "gpt-4o-mini"]);

    const usage = await readUntil(
      () =>
        account.must(
          stack.api<UsageBucket[]>("GET", "/agent-network/usage/overview?granularity=day", account.token),
        ),
      (buckets) => buckets[0]?.input_tokens === 220_000,
    );
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({
      input_tokens: 220_000,
      output_tokens: 37_000,
      cached_input_tokens: 140_000,
      cache_creation_tokens: 10_000,
      cost_usd: 0.8012,
    });

    const counters = await readUntil(
      () => account.must(stack.api<ConsumptionCounter[]>("GET", "/agent-network/consumption", account.token)),
      (list) => list.some((c) => c.dimension_kind === "user" && c.tokens_output === 37_000),
    );
    const userCounter = counters.find((c) => c.dimension_kind === "user");
    expect(userCounter).toMatchObject({
      dimension_id: account.owner.user_id,
      window_seconds: 86_400,
      tokens_output: 37_000,
      cost_usd: 0.8012,
    });
  });
});
