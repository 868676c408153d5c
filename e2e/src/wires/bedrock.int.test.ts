import Anthropic from "@anthropic-ai/sdk";
import {
  AccessDeniedException,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
  InternalServerException,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from "@aws-sdk/client-bedrock-runtime";
import { describe, expect, it } from "vitest";
import { BEDROCK_ANTHROPIC_VERSION } from "../vendors/bedrock";
import {
  ACCESS_KEY,
  type BedrockStack,
  expectBedrockKey,
  expectBedrockRow,
  MODEL,
  SESSION_KEY,
  startBedrockStack,
  USAGE,
} from "./bedrock-stack";
import { accountWithProvider, distinctWords, expectCutRow, useWireStack } from "./wire-stack";

let bedrock: BedrockStack;
useWireStack(startBedrockStack, (started) => {
  bedrock = started;
});

/** Claude's body as InvokeModel takes it: Anthropic's Messages API, Bedrock's version, no model. */
const claudeBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    max_tokens: 1024,
    messages: [{ role: "user", content: "say hi" }],
    ...extra,
  });

const decoder = new TextDecoder();

describe("the AWS SDK's Bedrock Runtime client, a bedrock_api provider keyed by a Bedrock API key", () => {
  it("InvokeModel: Claude's answer, one row with the vendor's counts and its cost", async () => {
    const { account, provider, seenBefore } = await bedrock.bedrockAccount();

    const answer = await bedrock
      .bedrockClient(account.token)
      .send(new InvokeModelCommand({ modelId: MODEL, body: claudeBody(), contentType: "application/json" }));

    const message = JSON.parse(decoder.decode(answer.body)) as { content: { text: string }[] };
    expect(message.content[0]?.text).toBe(bedrock.bedrock.reply);
    const seen = bedrock.bedrock.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([
      "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
    ]);
    // The body as the caller sent it, byte for byte.
    expect(seen[0]?.text).toBe(claudeBody());
    expectBedrockKey(seen, account.token);
    const [row, ...more] = await bedrock.rows(account, 1);
    expect(more).toEqual([]);
    expectBedrockRow(row, provider, false);
  });

  it("InvokeModelWithResponseStream: Claude's events in chunks, the row from its usage", async () => {
    const { account, provider, seenBefore } = await bedrock.bedrockAccount();
    bedrock.bedrock.reply = distinctWords(30);

    const answer = await bedrock
      .bedrockClient(account.token)
      .send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body: claudeBody() }));
    let text = "";
    const types: string[] = [];
    for await (const part of answer.body ?? []) {
      const event = JSON.parse(decoder.decode(part.chunk?.bytes)) as {
        type: string;
        delta?: { text?: string };
      };
      types.push(event.type);
      text += event.delta?.text ?? "";
    }

    expect(text).toBe(bedrock.bedrock.reply);
    expect(types.at(-1)).toBe("message_stop");
    const seen = bedrock.bedrock.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([
      "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
    ]);
    expectBedrockKey(seen, account.token);
    const [row] = await bedrock.rows(account, 1);
    expectBedrockRow(row, provider, true);
  });

  it("Converse and ConverseStream: the text, usage with cache reads and writes, a row each", async () => {
    const { account, provider } = await bedrock.bedrockAccount();
    const client = bedrock.bedrockClient(account.token);
    const messages = [{ role: "user" as const, content: [{ text: "say hi" }] }];

    const answer = await client.send(new ConverseCommand({ modelId: MODEL, messages }));
    expect(answer.output?.message?.content?.[0]?.text).toBe(bedrock.bedrock.reply);
    expect(answer.usage).toMatchObject({ inputTokens: 3_000, cacheReadInputTokens: 20_000 });

    const streamed = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages }));
    let text = "";
    let stopReason: string | undefined;
    for await (const event of streamed.stream ?? []) {
      text += event.contentBlockDelta?.delta?.text ?? "";
      stopReason = event.messageStop?.stopReason ?? stopReason;
    }
    expect(text).toBe(bedrock.bedrock.reply);
    expect(stopReason).toBe("end_turn");

    const [plain, stream] = await bedrock.rows(account, 2);
    expectBedrockRow(plain, provider, false);
    expectBedrockRow(stream, provider, true);
  });

  it("CountTokens: the vendor's count, free and unlogged", async () => {
    const { account } = await bedrock.bedrockAccount();
    const counted = await bedrock.bedrockClient(account.token).send(
      new CountTokensCommand({
        modelId: MODEL,
        input: { invokeModel: { body: new TextEncoder().encode(claudeBody()) } },
      }),
    );
    expect(counted.inputTokens).toBe(3_000);
  });

  it("a ConverseStream cut at the user's token cap ends as Bedrock's own: messageStop max_tokens, then metadata", async () => {
    const cap = 4_000;
    const { account } = await bedrock.bedrockAccount({ userCap: cap });
    bedrock.bedrock.claudeUsage = { input: 1_000, output: 6_000, cacheRead: 0, cacheWrite: 0 };
    bedrock.bedrock.reply = distinctWords(6_000);

    const streamed = await bedrock.bedrockClient(account.token).send(
      new ConverseStreamCommand({
        modelId: MODEL,
        messages: [{ role: "user", content: [{ text: "write at length" }] }],
        inferenceConfig: { maxTokens: 8_000 },
      }),
    );
    const kinds: string[] = [];
    let stopReason: string | undefined;
    for await (const event of streamed.stream ?? []) {
      kinds.push(Object.keys(event).find((key) => event[key as keyof typeof event] !== undefined) ?? "");
      stopReason = event.messageStop?.stopReason ?? stopReason;
    }

    expect(stopReason).toBe("max_tokens");
    expect(kinds.slice(-2)).toEqual(["messageStop", "metadata"]);
    const [row] = await bedrock.rows(account, 1);
    expectCutRow(row, cap);
  });

  it("a stream the vendor breaks off ends with Bedrock's exception event, which the SDK raises; the row is a 502", async () => {
    const { account } = await bedrock.bedrockAccount();
    bedrock.bedrock.reply = distinctWords(30);
    bedrock.bedrock.breakStreamAfter = 5;

    const streamed = await bedrock
      .bedrockClient(account.token)
      .send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body: claudeBody() }));
    let chunks = 0;
    const failure = await (async () => {
      for await (const part of streamed.body ?? []) if (part.chunk) chunks++;
    })().then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(chunks).toBe(5);
    expect(failure).toBeInstanceOf(InternalServerException);
    expect((failure as Error).message).toMatch(/broke off/);
    const [row] = await bedrock.rows(account, 1);
    expect(row).toMatchObject({ status_code: 502, stream: true, input_tokens: USAGE.input });
  });

  it("a token the gateway does not know: the SDK raises Bedrock's AccessDeniedException", async () => {
    const { seenBefore } = await bedrock.bedrockAccount();
    const refused = bedrock
      .bedrockClient("agn_not-a-token")
      .send(new InvokeModelCommand({ modelId: MODEL, body: claudeBody() }));
    await expect(refused).rejects.toBeInstanceOf(AccessDeniedException);
    expect(bedrock.bedrock.seen.length).toBe(seenBefore);
  });
});

describe("a bedrock_api provider keyed by IAM access keys: the proxy signs each request with SigV4", () => {
  it.each([
    ["access keys", ACCESS_KEY],
    ["temporary keys with a session token", SESSION_KEY],
  ])(
    "%s: the vendor checks the signature, and sees neither the secret nor the agentnet token",
    async (_, key) => {
      const { account, provider, seenBefore } = await bedrock.bedrockAccount({ accessKey: key });

      const answer = await bedrock
        .bedrockClient(account.token)
        .send(new InvokeModelCommand({ modelId: MODEL, body: claudeBody() }));

      expect(JSON.parse(decoder.decode(answer.body)).content[0].text).toBe(bedrock.bedrock.reply);
      const seen = bedrock.bedrock.seen.slice(seenBefore);
      expect(seen).toHaveLength(1);
      for (const request of seen) {
        expect(await bedrock.bedrock.signer(request)).toEqual(key);
        expect(request.headers["x-amz-security-token"]).toBe(key.session_token);
        const sent = JSON.stringify([request.headers, request.query, request.body]);
        expect(sent).not.toContain(key.secret_access_key);
        expect(sent).not.toContain(account.token);
      }
      const [row] = await bedrock.rows(account, 1);
      expectBedrockRow(row, provider, false);
    },
  );
});

describe("across wires: Anthropic's Messages API to Claude on Bedrock, Bedrock's InvokeModel to Anthropic", () => {
  /** Claude Sonnet 4.5 by Anthropic's id, and as Bedrock's global inference profile. */
  const ANTHROPIC_ID = "claude-sonnet-4-5-20250929";
  const GLOBAL_PROFILE = "global.anthropic.claude-sonnet-4-5-20250929-v1:0";

  it("the Anthropic SDK's message and stream reach Bedrock's invoke paths, Bedrock's body, Anthropic's events back", async () => {
    const { account, seenBefore } = await bedrock.bedrockAccount();
    const client = new Anthropic({
      baseURL: bedrock.stack.proxy.url,
      apiKey: account.token,
      maxRetries: 0,
      // One beta Bedrock takes (in the body), one the bedrock_api entry does not list.
      defaultHeaders: { "anthropic-beta": "interleaved-thinking-2025-05-14,not-a-bedrock-beta-2099-01-01" },
    });
    const request = {
      // The model as the provider's vendor names it: the proxy sends the caller's model as it is.
      model: GLOBAL_PROFILE,
      max_tokens: 256,
      messages: [{ role: "user" as const, content: "say hi" }],
    };

    const message = await client.messages.create(request);
    const stream = client.messages.stream(request);
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const streamed = await stream.finalMessage();

    expect(message.content).toEqual([{ type: "text", text: bedrock.bedrock.reply }]);
    expect(streamed.content).toEqual([{ type: "text", text: bedrock.bedrock.reply }]);
    expect(streamed.usage).toMatchObject({ input_tokens: 3_000, output_tokens: 256 });
    expect(types.at(0)).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    const seen = bedrock.bedrock.seen.slice(seenBefore);
    expect(seen.map((sent) => sent.path)).toEqual([
      `/model/${encodeURIComponent(GLOBAL_PROFILE)}/invoke`,
      `/model/${encodeURIComponent(GLOBAL_PROFILE)}/invoke-with-response-stream`,
    ]);
    for (const sent of seen) {
      expect(sent.body).not.toHaveProperty("model");
      expect(sent.body).not.toHaveProperty("stream");
      expect(sent.body.anthropic_version).toBe(BEDROCK_ANTHROPIC_VERSION);
      expect(sent.body.anthropic_beta).toEqual(["interleaved-thinking-2025-05-14"]);
    }
    expectBedrockKey(seen, account.token);
    const rows = await bedrock.rows(account, 2);
    expect(
      rows.map((row) => [row.stream, row.input_tokens, row.output_tokens, row.cached_input_tokens]),
    ).toEqual([
      [false, 3_000, 256, 20_000],
      [true, 3_000, 256, 20_000],
    ]);
  });

  it("InvokeModel and its stream reach an anthropic_api provider: /v1/messages, Anthropic's body, Bedrock's chunks back", async () => {
    const { stack } = bedrock;
    const { account } = await accountWithProvider(stack, {
      provider_id: "anthropic_api",
      name: "Claude",
      upstream_url: stack.anthropicUrl,
      api_key: "sk-ant-upstream",
    });
    const seenBefore = stack.anthropic.seen.length;
    const client = bedrock.bedrockClient(account.token);

    const answer = await client.send(new InvokeModelCommand({ modelId: ANTHROPIC_ID, body: claudeBody() }));
    const streamed = await client.send(
      new InvokeModelWithResponseStreamCommand({
        modelId: ANTHROPIC_ID,
        body: claudeBody({ anthropic_beta: ["interleaved-thinking-2025-05-14"] }),
      }),
    );
    let text = "";
    for await (const part of streamed.body ?? []) {
      const event = JSON.parse(decoder.decode(part.chunk?.bytes)) as { delta?: { text?: string } };
      text += event.delta?.text ?? "";
    }

    expect(JSON.parse(decoder.decode(answer.body)).content[0].text).toBe(stack.anthropic.reply);
    expect(text).toBe(stack.anthropic.reply);
    const seen = stack.anthropic.seen.slice(seenBefore);
    expect(seen.map((sent) => [sent.path, sent.body.model, sent.body.stream])).toEqual([
      ["/v1/messages", ANTHROPIC_ID, undefined],
      ["/v1/messages", ANTHROPIC_ID, true],
    ]);
    for (const sent of seen) {
      expect(sent.body).not.toHaveProperty("anthropic_version");
      expect(sent.body).not.toHaveProperty("anthropic_beta");
      expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
      expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream");
    }
    expect(seen[1]?.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
    const rows = await bedrock.rows(account, 2);
    expect(rows.map((row) => [row.decision, row.status_code, row.stream])).toEqual([
      ["allow", 200, false],
      ["allow", 200, true],
    ]);
  });
});
