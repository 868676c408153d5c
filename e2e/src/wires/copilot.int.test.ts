import { describe, expect, it } from "vitest";
import { configure } from "../setup";
import { type AzureStack, DEPLOYMENT, expectAzureKey, expectAzureRow, startAzureStack } from "./azure-stack";
import { runCopilot } from "./copilot-cli";
import { distinctWords, expectAllowedRow, expectCutRow, storedRows, useWireStack } from "./wire-stack";

let azure: AzureStack;
useWireStack(startAzureStack, (started) => {
  azure = started;
});

/**
 * gpt-4o in the catalog: $2.50 per million input tokens, $1.25 cached, $10 output. By hand:
 * (8,000 − 2,000) × $2.50/M + 2,000 × $1.25/M + 200 × $10/M = $0.015 + $0.0025 + $0.002.
 */
const OPENAI_USAGE = { input: 8_000, cached: 2_000, output: 200, creation: 0 };
const OPENAI_COST = 0.0195;

describe("GitHub Copilot CLI through the gateway", () => {
  it("on the OpenAI routes: prints the vendor's text, one row with its counts and cost", async () => {
    const { stack } = azure;
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    stack.openai.usage = { ...OPENAI_USAGE };
    stack.openai.reply = "Hello from Copilot's vendor";
    const seenBefore = stack.openai.seen.length;

    const run = await runCopilot({
      baseUrl: `${stack.proxy.url}/v1`,
      token: account.token,
      prompt: "say hi",
      model: "gpt-4o",
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(stack.openai.reply);
    const seen = stack.openai.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/v1/chat/completions"]);
    expect(seen[0]?.headers.authorization).toBe("Bearer sk-upstream-openai");
    expect(JSON.stringify([seen[0]?.headers, seen[0]?.body])).not.toContain(account.token);
    const [row, ...more] = await storedRows(stack, account, 1);
    expect(more).toEqual([]);
    expectAllowedRow(row, {
      provider: account.openaiProvider,
      model: "gpt-4o",
      stream: true,
      counts: {
        input_tokens: OPENAI_USAGE.input,
        cached_input_tokens: OPENAI_USAGE.cached,
        output_tokens: OPENAI_USAGE.output,
      },
      cost: OPENAI_COST,
    });
  }, 120_000);

  it("as an Azure provider type, on Azure's v1 routes: prints the vendor's text, one priced row", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const run = await runCopilot({
      baseUrl: azure.stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      model: DEPLOYMENT,
      env: { COPILOT_PROVIDER_TYPE: "azure" },
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/openai/v1/chat/completions"]);
    expectAzureKey(seen, account.token);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectAzureRow(row, provider, true);
  }, 120_000);
});

// Copilot CLI answers a `length` finish by asking again, the partial answer sent back and a user
// turn "Please continue from where you left off." appended. Under the cap the cut stream has spent,
// the proxy denies that request with 429 (the CLI tries once more), and the CLI ends with the
// error: the text so far on stdout, the 429 on stderr, exit code 1 (a failed turn, not a crash).
describe("a Copilot CLI answer cut at a token cap", () => {
  it("prints the text so far; its request to continue is denied, and it exits with code 1", async () => {
    // Its prompt (system instruction and tools) is some 5,500 tokens by the proxy's estimate and it
    // asks for 4,096 output tokens at most: the cap admits it with an output step or two, and cuts
    // the answer before those 4,096.
    const cap = 8_000;
    const { account, seenBefore } = await azure.azureAccount({ userCap: cap });
    azure.azure.usage = { input: 50, output: 100_000, cached: 0, creation: 0 };
    azure.azure.reply = distinctWords(60_000, "w");

    const run = await runCopilot({
      baseUrl: azure.stack.proxy.url,
      token: account.token,
      prompt: "write",
      model: DEPLOYMENT,
      env: { COPILOT_PROVIDER_TYPE: "azure" },
      timeoutMs: 60_000,
    });

    expect(run.exitCode, run.stderr).toBe(1);
    // It prints the answer's start; of a burst of one-word chunks it leaves some out, behind the
    // gateway or not, so only the start and the length are the gateway's to prove.
    expect(run.stdout.startsWith("w0 w1 w2")).toBe(true);
    expect(run.stdout.length).toBeLessThan(azure.azure.reply.length);
    expect(run.stderr).toContain("429");
    expect(run.stderr).toContain("budget_rule.token_cap_exceeded");
    // Only the cut request reached the vendor; the request to continue was denied at the proxy.
    expect(azure.azure.seen.slice(seenBefore)).toHaveLength(1);
    // It asks again once more after a pause; each ask is a row of its own, all denied.
    const [cut, ...denied] = await storedRows(azure.stack, account, 2);
    expectCutRow(cut, cap);
    expect(denied.length).toBeGreaterThan(0);
    for (const row of denied) {
      expect(row).toMatchObject({
        decision: "deny",
        status_code: 429,
        deny_reason: "budget_rule.token_cap_exceeded",
      });
    }
  }, 120_000);
});
