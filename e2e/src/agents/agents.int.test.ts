import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure } from "../setup";
import { type Stack, startStack } from "../stack";
import { runClaude } from "./claude-code";
import { runCodex } from "./codex";
import { runOpencode } from "./opencode";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const DAY = 86_400;

/** An account whose members may use the Anthropic provider under a $1/day budget rule. */
async function capped() {
  const account = await stack.newAccount();
  const setup = configure(stack, account);
  await setup.policy([account.anthropicProvider.id]);
  await setup.budgetRule({
    budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: DAY },
  });
  return account;
}

describe("Claude Code through the proxy (the real CLI)", () => {
  it("five runs at once under a $1/day cap all answer, each costed and grouped by its own session", async () => {
    const account = await capped();
    stack.anthropic.usage = { input: 1_200, output: 40, cached: 0, creation: 0 };
    stack.anthropic.reply = "Hello from the vendor mock.";
    const runs = await Promise.all(
      Array.from({ length: 5 }, () =>
        // Claude Code sends max_tokens 32,000 on this model, and streams.
        runClaude({
          baseUrl: stack.proxy.url,
          token: account.token,
          prompt: "say hi",
          model: "claude-opus-4-5",
        }),
      ),
    );
    for (const run of runs) {
      expect(run.json, run.stderr || run.stdout).toMatchObject({
        is_error: false,
        result: stack.anthropic.reply,
      });
    }
    const sessions = runs.map((run) => run.json?.session_id);
    expect(new Set(sessions).size).toBe(5);
    const events = await account.events.waitFor(5);
    const allowed = events.filter((event) => event.decision === "allow");
    expect(allowed.length).toBeGreaterThanOrEqual(5);
    // Every request of a run carries that run's session; every one is costed (Opus 4.5 list price).
    for (const event of allowed) {
      expect(sessions).toContain(event.session_id);
      expect(event.cost_usd).toBeGreaterThan(0);
      expect(event.stream).toBe(true);
    }
    // The vendor gets the provider's key, never the agentnet token.
    const seen = stack.anthropic.seen.slice(-5);
    for (const request of seen) {
      expect(request.headers["x-api-key"]).toBe("sk-ant-upstream");
      expect(JSON.stringify(request.headers)).not.toContain(account.token);
    }
  });

  it("its default model, which has no price, is refused under the USD cap with the reason", async () => {
    const account = await capped();
    const run = await runClaude({ baseUrl: stack.proxy.url, token: account.token, prompt: "say hi" });
    expect(run.json?.is_error).toBe(true);
    expect(`${run.json?.result}`).toContain("pricing.unknown_model");
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({ decision: "deny", deny_reason: "pricing.unknown_model" });
  });
});

describe("Codex through the proxy (the real CLI)", () => {
  it("answers over HTTP streaming after one refused WebSocket, costed and grouped by its session", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: DAY },
    });
    stack.openai.usage = { input: 2_000, output: 30, cached: 500, creation: 0 };
    stack.openai.reply = "Hello from the Codex mock.";
    const seenBefore = stack.openai.seen.length;

    const runs = await Promise.all(
      [1, 2].map(() =>
        runCodex({ baseUrl: stack.proxy.url, token: account.token, prompt: "say hi", model: "gpt-5" }),
      ),
    );
    for (const run of runs) {
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toContain(stack.openai.reply);
      // 426 on the WebSocket upgrade: Codex falls back at once instead of retrying five times.
      expect(run.stderr).not.toContain("Reconnecting");
    }

    const events = await account.events.waitFor(2);
    expect(new Set(events.map((event) => event.session_id)).size).toBe(2);
    for (const event of events) {
      expect(event).toMatchObject({ decision: "allow", model: "gpt-5", stream: true, input_tokens: 2_000 });
      expect(event.cost_usd).toBeGreaterThan(0);
    }
    const seen = stack.openai.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/v1/responses", "/v1/responses"]);
    for (const request of seen) {
      expect(request.headers.authorization).toBe("Bearer sk-upstream-openai");
      expect(JSON.stringify(request.headers)).not.toContain(account.token);
      // The session the proxy grouped by is the one Codex sent: in its session-id header, which
      // stays at the proxy, and as the body's prompt_cache_key, which the vendor gets.
      expect(request.headers["session-id"]).toBeUndefined();
      expect(events.map((event) => event.session_id)).toContain(request.body.prompt_cache_key);
    }
  });
});

describe("OpenCode through the proxy (the real CLI)", () => {
  it("answers, with its title request and its turn grouped under its own session and costed", async () => {
    const account = await capped();
    stack.anthropic.usage = { input: 900, output: 12, cached: 0, creation: 0 };
    stack.anthropic.reply = "Hello from the OpenCode mock.";
    const run = await runOpencode({
      baseUrl: stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      model: "claude-sonnet-4-5",
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(stack.anthropic.reply);
    // A title from a small model, then the turn: one session, OpenCode's own id.
    const events = await account.events.waitFor(2);
    expect(new Set(events.map((event) => event.session_id)).size).toBe(1);
    expect(events[0]?.session_id).toMatch(/^ses_/);
    for (const event of events) {
      expect(event).toMatchObject({ decision: "allow", stream: true });
      expect(event.cost_usd).toBeGreaterThan(0);
    }
    const request = stack.anthropic.seen.at(-1);
    expect(request?.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(JSON.stringify(request?.headers)).not.toContain(account.token);
  });
});
