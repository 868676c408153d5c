import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClaude } from "../agents/claude-code";
import { overloaded } from "../failing-vendor";
import { type RoutingStack, rowsOnceStored, startRoutingStack } from "./routing-stack";

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack();
});
afterAll(() => routing?.stop());

describe("Claude Code (the real CLI) when its vendor is overloaded", () => {
  it("answers through the fallback provider while the primary answers 529 to everything", async () => {
    const { account, first, second } = await routing.twoProviders("anthropic");
    routing.failing.anthropic.failAlways(overloaded);
    routing.healthy.anthropic.reply = "Hello from the fallback.";

    const run = await runClaude({
      baseUrl: routing.stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      model: "claude-sonnet-4-6",
      timeoutMs: 120_000,
    });
    expect(run.json, run.stderr || run.stdout).toMatchObject({
      is_error: false,
      result: routing.healthy.anthropic.reply,
    });

    // Every request it made is a row answered by the fallback: none of them saw the 529.
    await account.events.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const requests = account.events.events.length;
    const { rows, total } = await rowsOnceStored(routing, account, requests);
    expect(total).toBe(requests);
    for (const row of rows) {
      expect(row).toMatchObject({ decision: "allow", status_code: 200, resolved_provider_id: second.id });
    }
    expect(rows[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status])).toEqual([
      [first.id, 529],
      [second.id, 200],
    ]);
    expect(routing.failing.anthropic.failed).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
