import { describe, expect, it } from "vitest";
import { type ClaudeRun, runClaude } from "../agents/claude-code";
import { BEDROCK_ANTHROPIC_VERSION } from "../vendors/bedrock";
import {
  type BedrockStack,
  expectBedrockKey,
  expectBedrockRow,
  MODEL,
  startBedrockStack,
} from "./bedrock-stack";
import { distinctWords, expectCutRow, useWireStack } from "./wire-stack";

let bedrock: BedrockStack;
useWireStack(startBedrockStack, (started) => {
  bedrock = started;
});

/**
 * `claude -p` in Bedrock mode against the gateway, as a platform team that buys Claude through AWS
 * points it there: `CLAUDE_CODE_USE_BEDROCK` with the gateway as `ANTHROPIC_BEDROCK_BASE_URL` and
 * the agentnet token as the Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, sent as
 * `Authorization: Bearer`), its model Bedrock's id.
 */
const runClaudeOnBedrock = (token: string, prompt: string): Promise<ClaudeRun> =>
  runClaude({
    token,
    prompt,
    model: MODEL,
    timeoutMs: 120_000,
    env: {
      CLAUDE_CODE_USE_BEDROCK: "1",
      ANTHROPIC_BEDROCK_BASE_URL: bedrock.stack.proxy.url,
      AWS_BEARER_TOKEN_BEDROCK: token,
      AWS_REGION: "us-east-1",
      ANTHROPIC_SMALL_FAST_MODEL: MODEL,
    },
  });

/**
 * Claude Code printed the vendor's reply: what the vendor saw since `seenBefore`, and of that
 * its streamed calls (at least one).
 */
function answeredThroughBedrock(run: ClaudeRun, seenBefore: number) {
  expect(run.json, run.stderr || run.stdout).toMatchObject({
    is_error: false,
    result: bedrock.bedrock.reply,
  });
  const seen = bedrock.bedrock.seen.slice(seenBefore);
  const streamed = seen.filter((request) => request.path.endsWith("/invoke-with-response-stream"));
  expect(streamed.length).toBeGreaterThan(0);
  return { seen, streamed };
}

describe("Claude Code (the real CLI) in Bedrock mode with the gateway as its Bedrock base URL", () => {
  it("prints the vendor's text; its calls are priced rows of its session, the vendor saw the provider's key", async () => {
    const { account, provider, seenBefore } = await bedrock.bedrockAccount();
    bedrock.bedrock.reply = "Hello from Claude Code on Bedrock.";

    const run = await runClaudeOnBedrock(account.token, "say hi");

    const { seen, streamed } = answeredThroughBedrock(run, seenBefore);
    for (const request of streamed) {
      expect(request.path).toBe(
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
      );
      expect(request.body.anthropic_version).toBe(BEDROCK_ANTHROPIC_VERSION);
      expect(request.body).not.toHaveProperty("model");
    }
    expectBedrockKey(seen, account.token);
    const metered = seen.filter((request) => !request.path.endsWith("/count-tokens"));
    const rows = await bedrock.rows(account, metered.length);
    expect(rows).toHaveLength(metered.length);
    const session = run.json?.session_id;
    for (const row of rows) {
      expect(row.session_id).toBe(session);
      if (row.stream) expectBedrockRow(row, provider, true);
    }
  }, 180_000);

  it("a stream cut at the user's token cap ends with max_tokens; Claude Code exits naming the cap", async () => {
    const cap = 20_000;
    const { account } = await bedrock.bedrockAccount({ userCap: cap });
    bedrock.bedrock.claudeUsage = { input: 50, output: 100_000, cacheRead: 0, cacheWrite: 0 };
    bedrock.bedrock.reply = distinctWords(60_000, "w");

    const run = await runClaudeOnBedrock(account.token, "write");

    expect(run.exitCode).toBe(1);
    expect(run.json, run.stderr || run.stdout).toMatchObject({ is_error: true });
    expect(run.json?.result).toContain("budget_rule.token_cap_exceeded");
    const rows = await bedrock.rows(account, 2);
    const cut = rows.find((row) => row.status_code === 200 && row.stream);
    expectCutRow(cut, cap);
    const refused = rows.filter((row) => row.decision === "deny");
    expect(refused.length).toBeGreaterThan(0);
    for (const row of refused)
      expect(row).toMatchObject({ status_code: 429, deny_reason: "budget_rule.token_cap_exceeded" });
  }, 180_000);
});

describe("Claude Code in Bedrock mode with AWS auth skipped, the token in a header it adds", () => {
  it("answers: its invoke calls carry the token (ANTHROPIC_CUSTOM_HEADERS), nothing else is needed", async () => {
    const { account, provider, seenBefore } = await bedrock.bedrockAccount();
    bedrock.bedrock.reply = "Hello from Claude Code on Bedrock, auth skipped.";

    const run = await runClaude({
      token: account.token,
      prompt: "say hi",
      model: MODEL,
      timeoutMs: 120_000,
      env: {
        CLAUDE_CODE_USE_BEDROCK: "1",
        ANTHROPIC_BEDROCK_BASE_URL: bedrock.stack.proxy.url,
        CLAUDE_CODE_SKIP_BEDROCK_AUTH: "1",
        ANTHROPIC_CUSTOM_HEADERS: `Authorization: Bearer ${account.token}`,
        AWS_REGION: "us-east-1",
        ANTHROPIC_SMALL_FAST_MODEL: MODEL,
      },
    });

    const { seen } = answeredThroughBedrock(run, seenBefore);
    expectBedrockKey(seen, account.token);
    const metered = seen.filter((request) => !request.path.endsWith("/count-tokens"));
    const rows = await bedrock.rows(account, metered.length);
    for (const row of rows.filter((found) => found.stream)) expectBedrockRow(row, provider, true);
  }, 180_000);
});

describe("Claude Code (the real CLI) in its normal mode, reaching Claude on a Bedrock provider", () => {
  it("prints the vendor's text; each call reached Bedrock's invoke paths in Bedrock's body, as priced rows", async () => {
    const { account, seenBefore } = await bedrock.bedrockAccount();
    bedrock.bedrock.reply = "Hello from Claude Code through Bedrock.";
    // The model as the provider's vendor names it: Bedrock's global inference profile.
    const model = "global.anthropic.claude-sonnet-4-5-20250929-v1:0";

    const run = await runClaude({
      baseUrl: bedrock.stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      model,
      timeoutMs: 120_000,
      env: { ANTHROPIC_SMALL_FAST_MODEL: model },
    });

    const { seen } = answeredThroughBedrock(run, seenBefore);
    for (const request of seen) {
      expect(request.path).toMatch(/^\/model\/global\.anthropic\.claude-sonnet-4-5-20250929-v1%3A0\//);
      expect(request.body).not.toHaveProperty("model");
      expect(request.body.anthropic_version).toBe(BEDROCK_ANTHROPIC_VERSION);
    }
    expectBedrockKey(seen, account.token);
    const metered = seen.filter((request) => !request.path.endsWith("/count-tokens"));
    const rows = await bedrock.rows(account, metered.length);
    expect(rows).toHaveLength(metered.length);
    for (const row of rows) expect(row).toMatchObject({ decision: "allow", status_code: 200, model });
  }, 180_000);
});
