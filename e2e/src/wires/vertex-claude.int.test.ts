import { findCatalogProvider } from "@agentnet/catalog";
import { describe, expect, it } from "vitest";
import { anthropicClient } from "../setup";
import { SDK_ANTHROPIC_VERSION, VERTEX_ANTHROPIC_VERSION } from "../vendors/vertex-anthropic";
import { runClaudeOnVertex } from "./vertex-claude-code";
import {
  expectMintedCredential,
  expectPricedRow,
  LOCATION,
  MODEL,
  PROJECT,
  startVertexClaudeStack,
  USAGE,
  type VertexClaudeStack,
  vertexPath,
} from "./vertex-claude-stack";
import { distinctWords, expectCutRow, useWireStack } from "./wire-stack";

/** The `anthropic-beta` values the vertex_api catalog entry lets through to Vertex, the ones Claude Code sends among them. */
const VERTEX_BETAS = findCatalogProvider("vertex_api")?.anthropic_betas ?? [];

let vertex: VertexClaudeStack;
useWireStack(startVertexClaudeStack, (started) => {
  vertex = started;
});

/**
 * A message asked of the account's provider: the vendor's answer; one rawPredict at the provider's
 * project and location (not the client's), its body as Vertex takes it (no model, and
 * `anthropicVersion`), keyed by a token minted from the provider's key; one priced row.
 */
async function expectOneRawPredict(
  granted: Awaited<ReturnType<VertexClaudeStack["claudeAccount"]>>,
  message: { content: unknown },
  anthropicVersion: string,
) {
  const { account, provider, serviceAccount, seenBefore } = granted;
  expect(message.content).toEqual([{ type: "text", text: vertex.vertex.reply }]);
  const seen = vertex.vertex.seen.slice(seenBefore);
  expect(seen.map((request) => request.path)).toEqual([vertexPath("rawPredict")]);
  expect(seen[0]?.body).not.toHaveProperty("model");
  expect(seen[0]?.body.anthropic_version).toBe(anthropicVersion);
  expectMintedCredential(seen, vertex, serviceAccount, account.token);
  const [row, ...more] = await vertex.rows(account, 1);
  expect(more).toEqual([]);
  expectPricedRow(row, provider, false, await vertex.catalogPricesModel(account));
}

describe("@anthropic-ai/vertex-sdk with the gateway as its base URL, a vertex_api provider keyed by a service-account key", () => {
  it("messages.create: the vendor's answer, one row with its counts and cost", async () => {
    const granted = await vertex.claudeAccount();

    const message = await vertex.vertexClient(granted.account.token).messages.create({
      model: MODEL,
      max_tokens: 1_024,
      messages: [{ role: "user", content: "say hi" }],
    });

    // The client's own anthropic_version, unchanged.
    await expectOneRawPredict(granted, message, SDK_ANTHROPIC_VERSION);
  });

  it("messages.stream: the vendor's text event by event, one row with its counts and cost", async () => {
    const { account, provider, serviceAccount, seenBefore } = await vertex.claudeAccount();
    vertex.vertex.reply = distinctWords(40);

    const stream = vertex.vertexClient(account.token).messages.stream({
      model: MODEL,
      max_tokens: 1_024,
      messages: [{ role: "user", content: "say hi" }],
    });
    let deltas = 0;
    stream.on("text", () => deltas++);
    const message = await stream.finalMessage();

    expect(message.content).toEqual([{ type: "text", text: vertex.vertex.reply }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(deltas).toBe(40);
    const seen = vertex.vertex.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([vertexPath("streamRawPredict")]);
    expectMintedCredential(seen, vertex, serviceAccount, account.token);
    const [row, ...more] = await vertex.rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true, await vertex.catalogPricesModel(account));
  });

  it("messages.countTokens: counted at Vertex's count-tokens model, the model named in the body", async () => {
    const { account, serviceAccount, seenBefore } = await vertex.claudeAccount();

    const counted = await vertex.vertexClient(account.token).messages.countTokens({
      model: MODEL,
      messages: [{ role: "user", content: "say hi" }],
    });

    expect(counted.input_tokens).toBe(USAGE.input);
    const seen = vertex.vertex.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([
      `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models/count-tokens:rawPredict`,
    ]);
    expect(seen[0]?.body.model).toBe(MODEL);
    expectMintedCredential(seen, vertex, serviceAccount, account.token);
  });

  it("refuses a token it does not know in Anthropic's error shape, before the vendor", async () => {
    const seenBefore = vertex.vertex.seen.length;

    const refused = await vertex
      .vertexClient("agn_not-a-token")
      .messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);

    expect(refused).toMatchObject({ status: 401, error: { type: "error" } });
    expect(vertex.vertex.seen.length).toBe(seenBefore);
  });
});

describe("the Anthropic SDK on /v1/messages, the same vertex_api provider", () => {
  it("reaches Vertex's rawPredict with Vertex's body: no model, Vertex's anthropic_version", async () => {
    const granted = await vertex.claudeAccount();

    const message = await anthropicClient(vertex.stack, granted.account.token).messages.create({
      model: MODEL,
      max_tokens: 1_024,
      messages: [{ role: "user", content: "say hi" }],
    });

    await expectOneRawPredict(granted, message, VERTEX_ANTHROPIC_VERSION);
  });

  it("sends the rest of the caller's body as sent: only model leaves and anthropic_version comes", async () => {
    const granted = await vertex.claudeAccount();
    const sent = `{"model": "${MODEL}", "max_tokens": 64, "system": [{"type": "text", "text": "terse", "cache_control": {"type": "ephemeral"}}], "messages": [{"role": "user", "content": "say h\\u00ed"}]}`;
    const response = await fetch(`${vertex.stack.proxy.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": granted.account.token,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: sent,
    });

    expect(response.status).toBe(200);
    const [seen] = vertex.vertex.seen.slice(granted.seenBefore);
    expect(seen?.text).toBe(
      `${sent.replace(`"model": "${MODEL}", `, "").slice(0, -1)},"anthropic_version":"${VERTEX_ANTHROPIC_VERSION}"}`,
    );
  });
});

describe("Claude Code (the real CLI) in Vertex mode with the gateway as its Vertex base URL", () => {
  it("prints the vendor's text; its request is one priced row in its own session", async () => {
    const { account, provider, serviceAccount, seenBefore } = await vertex.claudeAccount();
    vertex.vertex.reply = "Hello from Claude Code on Vertex.";

    const run = await runClaudeOnVertex({
      baseUrl: vertex.stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      project: "client-project",
      region: "europe-west1",
      model: MODEL,
      timeoutMs: 120_000,
    });

    expect(run.json, run.stderr || run.stdout).toMatchObject({
      is_error: false,
      result: vertex.vertex.reply,
    });
    const seen = vertex.vertex.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([vertexPath("streamRawPredict")]);
    expect(seen[0]?.body.anthropic_version).toBe(VERTEX_ANTHROPIC_VERSION);
    expectMintedCredential(seen, vertex, serviceAccount, account.token);
    // Claude Code names its session in x-claude-code-session-id (and metadata.user_id's session_id).
    const session = run.json?.session_id;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const found = await vertex.rows(account, seen.length);
    expect(found).toHaveLength(seen.length);
    for (const row of found) {
      expectPricedRow(row, provider, true, await vertex.catalogPricesModel(account));
      expect(row.session_id).toBe(session);
    }
    // Of the betas Claude Code sends (claude-code-20250219, interleaved-thinking-2025-05-14,
    // web-search-2025-03-05, tool-search-tool-2025-10-19 on this model), Vertex gets those it takes.
    const betas = String(seen[0]?.headers["anthropic-beta"] ?? "").split(",");
    expect(betas).toContain("interleaved-thinking-2025-05-14");
    for (const beta of betas) expect(VERTEX_BETAS).toContain(beta);
  }, 180_000);
});

describe("a Vertex Claude stream cut at a token cap", () => {
  it("ends the Vertex SDK's stream without an error: message_delta with max_tokens, then message_stop", async () => {
    const cap = 3_000;
    const { account } = await vertex.claudeAccount({ userCap: cap });
    vertex.vertex.claudeUsage = { input: 50, output: 20_000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };
    vertex.vertex.reply = Array.from({ length: 10_000 }, (_, i) => `w${i % 10}`).join(" ");

    const stream = vertex.vertexClient(account.token).messages.stream({
      model: MODEL,
      max_tokens: 32_000,
      messages: [{ role: "user", content: "write" }],
    });
    const events: { type: string; stop_reason?: unknown }[] = [];
    for await (const event of stream) {
      events.push({
        type: event.type,
        ...(event.type === "message_delta" ? { stop_reason: event.delta.stop_reason } : {}),
      });
    }
    const message = await stream.finalMessage();

    expect(events.slice(-2)).toEqual([
      { type: "message_delta", stop_reason: "max_tokens" },
      { type: "message_stop" },
    ]);
    expect(message.stop_reason).toBe("max_tokens");
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(vertex.vertex.reply.length);
    const [row, ...more] = await vertex.rows(account, 1);
    expect(more).toEqual([]);
    expectCutRow(row, cap);
  });
});

describe("a Claude Code stream on Vertex cut at a token cap", () => {
  it("is cut with max_tokens; Claude Code asks again to go on, which the cap refuses, and exits naming the cap", async () => {
    // Its prompt (system prompt and tools) is some 10,000 tokens by the proxy's estimate: the cap
    // admits it with a few output steps, not the 32,000 output tokens it asks for at most.
    const cap = 20_000;
    const { account, seenBefore } = await vertex.claudeAccount({ userCap: cap });
    vertex.vertex.claudeUsage = {
      input: 50,
      output: 100_000,
      cacheRead: 0,
      cacheWrite5m: 0,
      cacheWrite1h: 0,
    };
    vertex.vertex.reply = distinctWords(60_000, "w");

    const run = await runClaudeOnVertex({
      baseUrl: vertex.stack.proxy.url,
      token: account.token,
      prompt: "write",
      project: "client-project",
      region: "europe-west1",
      model: MODEL,
      timeoutMs: 120_000,
    });

    // Claude Code reads a max_tokens stop as a turn to continue: its next request finds the cap
    // spent and is refused (429), and it ends with that error, not with the text so far.
    expect(run.exitCode).toBe(1);
    expect(run.json, run.stderr || run.stdout).toMatchObject({ is_error: true, api_error_status: 429 });
    expect(run.json?.result).toContain("budget_rule.token_cap_exceeded");
    expect(vertex.vertex.seen.slice(seenBefore)).toHaveLength(1);
    const [cut, ...refused] = await vertex.rows(account, 2);
    expectCutRow(cut, cap);
    expect(refused.length).toBeGreaterThan(0);
    for (const row of refused) {
      expect(row).toMatchObject({
        decision: "deny",
        status_code: 429,
        deny_reason: "budget_rule.token_cap_exceeded",
      });
      expect(row.session_id).toBe(cut?.session_id);
    }
  }, 180_000);
});
