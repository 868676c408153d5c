import { request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import { uniqueId } from "@agentnet/testkit";
import { request as undiciRequest } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, anthropicClient as anthropicOf, configure, openaiClient as openaiOf } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A policy letting the account's All group use the given providers. */
const grant = (account: Account, providerIds: string[], extra: Record<string, unknown> = {}) =>
  configure(stack, account).policy(providerIds, extra);

const guardrail = (account: Account, checks: Record<string, unknown>) =>
  configure(stack, account).guardrail(checks);

const openaiClient = (token: string) => openaiOf(stack, token);
const anthropicClient = (token: string) => anthropicOf(stack, token);

describe("OpenAI-style requests", () => {
  it("forwards a chat completion with the provider's key, identity and metadata, and prices it", async () => {
    const account = await stack.newAccount();
    const policy = await grant(account, [account.openaiProvider.id]);
    stack.openai.usage = { input: 200_000, output: 30_000, cached: 120_000, creation: 0 };

    const completion = await openaiClient(account.token).chat.completions.create(
      { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], max_tokens: 100 },
      { headers: { "x-session-id": "sess-1" } },
    );
    expect(completion.choices[0]?.message.content).toBe("Hello from upstream");

    const seen = stack.openai.last;
    expect(seen?.path).toBe("/v1/chat/completions");
    expect(seen?.headers.authorization).toBe("Bearer sk-upstream-openai");
    expect(JSON.stringify(seen?.headers)).not.toContain(account.token);
    expect(seen?.headers["x-caller"]).toBe(account.owner.email);
    expect(seen?.headers["x-caller-groups"]).toBe(account.owner.group_ids.join(","));
    expect(seen?.body.user).toBe(account.owner.user_id);

    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({
      account_id: account.owner.account_id,
      service_id: `agent-network:${account.owner.account_id}`,
      status_code: 200,
      decision: "allow",
      deny_reason: "",
      user_id: account.owner.user_id,
      user_email: account.owner.email,
      provider: "OpenAI",
      resolved_provider_id: account.openaiProvider.id,
      selected_policy_id: policy.id,
      model: "gpt-4o",
      session_id: "sess-1",
      method: "POST",
      host: seen?.headers.host,
      path: "/v1/chat/completions",
      source_ip: "127.0.0.1",
      input_tokens: 200_000,
      output_tokens: 30_000,
      total_tokens: 230_000,
      cached_input_tokens: 120_000,
      cache_creation_tokens: 0,
      stream: false,
      logged: true,
      group_ids: account.owner.group_ids,
    });
    // gpt-4o list prices: 80k uncached × $2.50/M + 120k cached × $1.25/M + 30k × $10/M.
    expect(event?.input_cost_usd).toBe(0.2);
    expect(event?.cached_input_cost_usd).toBe(0.15);
    expect(event?.output_cost_usd).toBe(0.3);
    expect(event?.cache_cost_usd).toBe(0.15);
    expect(event?.cost_usd).toBe(0.65);
    expect(event?.reserved_counters).toBeUndefined();
  });

  it("serves responses and embeddings, and lists the caller's models", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.openaiProvider.id, account.anthropicProvider.id]);
    stack.openai.usage = { input: 10, output: 5, cached: 4, creation: 0 };
    const client = openaiClient(account.token);
    const response = await client.responses.create({ model: "gpt-4.1", input: "hello" });
    expect(response.output_text).toBe("Hello from upstream");
    const embedding = await client.embeddings.create({ model: "gpt-4o", input: "x" });
    expect(embedding.data[0]?.embedding).toHaveLength(3);
    const events = await account.events.waitFor(2);
    expect(events.map((e) => [e.path, e.input_tokens, e.cached_input_tokens])).toEqual([
      ["/v1/responses", 10, 4],
      ["/v1/embeddings", 10, 0],
    ]);

    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).toContain("gpt-4o");
    expect(ids).not.toContain("claude-sonnet-4-5");
    const claude = await anthropicClient(account.token).models.list();
    expect(claude.data.map((m) => m.id)).toContain("claude-sonnet-4-5");
  });
});

describe("Anthropic-style requests", () => {
  it("forwards a message with x-api-key, anthropic-version and metadata, and prices cache tokens additively", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.anthropicProvider.id]);
    stack.anthropic.usage = { input: 10_000, output: 2_000, cached: 100_000, creation: 20_000 };

    const message = await anthropicClient(account.token).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.content[0]?.type === "text" && message.content[0].text).toBe("Hello from upstream");
    const seen = stack.anthropic.last;
    expect(seen?.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(seen?.headers.authorization).toBeUndefined();
    // The SDK's own anthropic-version passes; the catalog default fills in only when none is sent.
    expect(seen?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(seen?.body.metadata).toEqual({ user_id: account.owner.user_id });

    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({
      provider: "Claude",
      path: "/v1/messages",
      input_tokens: 10_000,
      output_tokens: 2_000,
      cached_input_tokens: 100_000,
      cache_creation_tokens: 20_000,
      total_tokens: 132_000,
    });
    // Sonnet 4.5: 10k × $3/M + 100k reads × $0.30/M + 20k writes × $3.75/M + 2k × $15/M.
    expect(event?.input_cost_usd).toBe(0.03);
    expect(event?.cached_input_cost_usd).toBe(0.03);
    expect(event?.cache_creation_cost_usd).toBe(0.075);
    expect(event?.output_cost_usd).toBe(0.03);
    expect(event?.cache_cost_usd).toBe(0.105);
    expect(event?.cost_usd).toBe(0.165);
  });
});

describe("Anthropic gateway protocol", () => {
  it("forwards count_tokens (authenticated, policy-checked, not logged or charged)", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.anthropicProvider.id]);
    stack.anthropic.usage = { input: 1_234, output: 0, cached: 0, creation: 0 };
    const counted = await anthropicClient(account.token).messages.countTokens({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(counted.input_tokens).toBe(1_234);
    const seen = stack.anthropic.last;
    expect(seen?.path).toBe("/v1/messages/count_tokens");
    expect(seen?.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(seen?.body.metadata).toBeUndefined();
    const denied = await anthropicClient((await stack.newAccount()).token)
      .messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 403 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(account.events.events).toEqual([]);
  });

  it("keeps Claude Code's beta query flag and forwards anthropic-beta and anthropic-version as it sends them", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.anthropicProvider.id]);
    const response = await fetch(`${stack.proxy.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
      },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(response.status).toBe(200);
    const seen = stack.anthropic.last;
    expect(seen?.query).toBe("beta=true");
    expect(seen?.headers["anthropic-beta"]).toBe("claude-code-20250219,interleaved-thinking-2025-05-14");
    expect(seen?.headers["anthropic-version"]).toBe("2023-06-01");
  });
});

describe("refusals", () => {
  it("401 in the vendor's shape for a missing or unknown token", async () => {
    const bad = openaiClient("agn_nope");
    await expect(bad.chat.completions.create({ model: "gpt-4o", messages: [] })).rejects.toMatchObject({
      status: 401,
      code: "auth.invalid_token",
    });
    await expect(
      anthropicClient("agn_nope").messages.create({ model: "x", max_tokens: 1, messages: [] }),
    ).rejects.toMatchObject({
      status: 401,
      error: { type: "error", error: { type: "authentication_error" } },
    });
  });

  it("reports its event pipeline on /status without auth: publishing, pending, dropped", async () => {
    const response = await undiciRequest(`${stack.proxy.url}/status`);
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject({
      events: { publishing: true, dropped: 0, buffer_bound: expect.any(Number) },
    });
  });

  it("400 for an absurd output cap or a body nested past 64 levels, never 500", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.openaiProvider.id]);
    const send = (body: string) =>
      undiciRequest(`${stack.proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.token}`, "content-type": "application/json" },
        body,
      });
    const huge = await send('{"model":"gpt-4o","messages":[],"max_tokens":1e308}');
    expect(huge.statusCode).toBe(400);
    expect(await huge.body.json()).toMatchObject({
      error: { code: "request.invalid", message: /max_tokens/ },
    });
    const deep = await send(`{"model":"gpt-4o","messages":[${"[".repeat(10_000)}${"]".repeat(10_000)}]}`);
    expect(deep.statusCode).toBe(400);
    expect(await deep.body.json()).toMatchObject({
      error: { code: "request.invalid", message: /nests deeper/ },
    });
  });

  it("403 llm_policy.no_matching_policy without a policy, logged as a denied event", async () => {
    const account = await stack.newAccount();
    const call = openaiClient(account.token).chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    await expect(call).rejects.toMatchObject({ status: 403, code: "llm_policy.no_matching_policy" });
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({
      decision: "deny",
      deny_reason: "llm_policy.no_matching_policy",
      status_code: 403,
      input_tokens: 0,
      cost_usd: 0,
    });
  });

  it("403 guardrail.model_not_allowed outside the allowlist; a config change applies at once", async () => {
    const account = await stack.newAccount();
    const allow = await guardrail(account, { model_allowlist: { enabled: true, models: ["gpt-4o-mini"] } });
    const policy = await grant(account, [account.openaiProvider.id], { guardrail_ids: [allow.id] });
    const client = openaiClient(account.token);
    const ask = () =>
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] });
    await expect(ask()).rejects.toMatchObject({ status: 403, code: "guardrail.model_not_allowed" });
    const [denied] = await account.events.waitFor(1);
    expect(denied).toMatchObject({
      deny_reason: "guardrail.model_not_allowed",
      selected_policy_id: policy.id,
    });

    await account.must(
      stack.api("PUT", `/agent-network/guardrails/${allow.id}`, account.token, {
        name: "g",
        checks: {
          model_allowlist: { enabled: true, models: ["gpt-4o-mini", "gpt-4o"] },
          prompt_capture: { enabled: false, redact_pii: false },
        },
      }),
    );
    await expect(ask()).resolves.toMatchObject({ object: "chat.completion" });
  });

  it("403 gateway.endpoint_mismatch for a Host that is neither the account's endpoint nor loopback", async () => {
    const account = await stack.newAccount();
    await grant(account, [account.openaiProvider.id]);
    const send = (host: string) =>
      undiciRequest(`${stack.proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { host, authorization: `Bearer ${account.token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", messages: [] }),
      });
    const other = await send("someone-else.gw.example.com");
    expect(other.statusCode).toBe(403);
    expect(await other.body.json()).toMatchObject({ error: { code: "gateway.endpoint_mismatch" } });
    const own = await send(account.endpoint);
    expect(own.statusCode).toBe(200);
    await own.body.dump();
  });

  it("403 gateway.not_configured for an account without agent-network settings", async () => {
    const boot = await request(stack.nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("o")}@example.com`,
    });
    const call = openaiClient(boot.token).chat.completions.create({ model: "gpt-4o", messages: [] });
    await expect(call).rejects.toMatchObject({ status: 403, code: "gateway.not_configured" });
  });
});
