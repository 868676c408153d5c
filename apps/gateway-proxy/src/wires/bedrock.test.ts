import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { describe, expect, it } from "vitest";
import { bedrockConverse, bedrockErrorType, bedrockInvoke } from "./bedrock";
import { eventMessage } from "./event-stream";
import { matchRoute, vendorTarget, wireOfUnknownPath } from "./index";
import { StreamWatcher } from "./stream-watcher";

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const SONNET = "anthropic.claude-sonnet-4-5-20250929-v1:0";

/** An InvokeModelWithResponseStream chunk carrying one of Claude's stream events. */
const chunk = (event: unknown) =>
  eventMessage("chunk", { bytes: Buffer.from(JSON.stringify(event)).toString("base64"), p: "abcd" });

const CLAUDE_EVENTS = [
  {
    type: "message_start",
    message: {
      id: "msg_1",
      model: "claude-sonnet-4-5-20250929",
      usage: {
        input_tokens: 12,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 40,
        output_tokens: 1,
      },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello from Bedrock" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } },
  {
    type: "message_stop",
    "amazon-bedrock-invocationMetrics": { inputTokenCount: 12, outputTokenCount: 5, invocationLatency: 9 },
  },
];

/** Splits bytes into their event-stream messages, decoded. */
function codecMessages(bytes: string | Uint8Array) {
  const decoded = [];
  const buffer = Buffer.from(bytes);
  for (let start = 0; start < buffer.length; ) {
    const length = buffer.readUInt32BE(start);
    decoded.push(codec.decode(buffer.subarray(start, start + length)));
    start += length;
  }
  return decoded;
}

function messages(bytes: Uint8Array) {
  return codecMessages(bytes).map((message) => ({
    type: message.headers[":event-type"]?.value,
    payload: JSON.parse(Buffer.from(message.body).toString("utf8")) as Record<string, unknown>,
  }));
}

describe("Bedrock's routes", () => {
  it("serves InvokeModel, Converse, their streams and CountTokens, the path naming the model", () => {
    expect(matchRoute(`/model/${encodeURIComponent(SONNET)}/invoke`)).toEqual({
      ingress: "bedrock",
      wire: bedrockInvoke,
      operation: "messages",
      label: "/model/{modelId}/invoke",
      pathModel: SONNET,
      streams: false,
    });
    // Claude Code leaves the `:` of the model id as it is; the AWS SDK sends %3A.
    expect(matchRoute(`/model/${SONNET}/invoke-with-response-stream`)).toMatchObject({
      wire: bedrockInvoke,
      pathModel: SONNET,
      streams: true,
    });
    expect(matchRoute("/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse-stream")).toMatchObject({
      wire: bedrockConverse,
      operation: "chat",
      pathModel: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
      streams: true,
    });
    expect(matchRoute(`/model/${SONNET}/count-tokens`)).toMatchObject({ operation: "count_tokens" });
    expect(matchRoute(`/model/${SONNET}/invoke-async`)).toBeUndefined();
    expect(wireOfUnknownPath("/model/x/apply-guardrail", {})).toBe(bedrockInvoke);
  });

  it("goes to the same method at a Bedrock provider, the model id as one path segment", () => {
    const route = matchRoute(`/model/${SONNET}/invoke-with-response-stream`);
    if (!route) throw new Error("no route");
    const upstream = "https://bedrock-runtime.us-east-1.amazonaws.com";
    expect(vendorTarget(upstream, "bedrock", route, SONNET, true, "")?.pathWithQuery).toBe(
      "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
    );
    expect(vendorTarget(upstream, "openai", route, SONNET, true, "")).toBeUndefined();
  });

  it("answers errors as Bedrock does: the message in the body, the type in x-amzn-errortype", () => {
    expect(bedrockInvoke.errorBody(429, "cap.exceeded", "over the cap (cap.exceeded)")).toEqual({
      message: "over the cap (cap.exceeded)",
    });
    expect(bedrockInvoke.errorHeaders(429)).toEqual({ "x-amzn-errortype": "ThrottlingException" });
    expect(bedrockErrorType(400)).toBe("ValidationException");
    expect(bedrockErrorType(403)).toBe("AccessDeniedException");
    expect(bedrockErrorType(503)).toBe("ServiceUnavailableException");
  });
});

describe("Bedrock's usage", () => {
  it("reads Claude's usage in an InvokeModel answer and Converse's with its cache reads and writes", () => {
    expect(
      bedrockInvoke.answerUsage(
        { usage: { input_tokens: 3, output_tokens: 4, cache_read_input_tokens: 5 } },
        {},
      ),
    ).toMatchObject({ input_tokens: 3, output_tokens: 4, cached_input_tokens: 5 });
    expect(
      bedrockConverse.answerUsage(
        {
          output: { message: { role: "assistant", content: [{ text: "hi" }] } },
          usage: {
            inputTokens: 7,
            outputTokens: 2,
            totalTokens: 39,
            cacheReadInputTokens: 20,
            cacheWriteInputTokens: 10,
          },
        },
        {},
      ),
    ).toEqual({
      input_tokens: 7,
      output_tokens: 2,
      cached_input_tokens: 20,
      cache_creation_tokens: 10,
      cache_creation_1h_tokens: 0,
    });
    expect(
      bedrockConverse.totalTokens(
        bedrockConverse.answerUsage(
          { usage: { inputTokens: 7, outputTokens: 2, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 } },
          {},
        ),
      ),
    ).toBe(39);
  });

  it("reads an invoke stream's Claude events from its chunks, split anywhere, and its text", () => {
    const bytes = Buffer.concat(CLAUDE_EVENTS.map(chunk));
    const watcher = new StreamWatcher(bedrockInvoke.stream, 1000);
    for (let start = 0; start < bytes.length; start += 13) watcher.push(bytes.subarray(start, start + 13));
    watcher.end();
    expect(watcher.usage).toEqual({
      input_tokens: 12,
      output_tokens: 5,
      cached_input_tokens: 100,
      cache_creation_tokens: 40,
      cache_creation_1h_tokens: 0,
    });
    expect(watcher.completion()).toBe("Hello from Bedrock");
    expect(watcher.model).toBe("claude-sonnet-4-5-20250929");
  });

  it("reads InvokeModel's token-count headers, whatever the model's body (its cache reads and writes beside input)", () => {
    const headers = {
      "x-amzn-bedrock-input-token-count": "30",
      "x-amzn-bedrock-output-token-count": "8",
      "x-amzn-bedrock-cache-read-input-token-count": "200",
      "x-amzn-bedrock-cache-write-input-token-count": "50",
    };
    const counts = {
      input_tokens: 30,
      output_tokens: 8,
      cached_input_tokens: 200,
      cache_creation_tokens: 50,
      cache_creation_1h_tokens: 0,
    };
    expect(bedrockInvoke.answerUsage({ generation: "a Llama answer", stop_reason: "stop" }, headers)).toEqual(
      counts,
    );
    // Claude's split of cache writes by lifetime stays; the counts are Bedrock's.
    expect(
      bedrockInvoke.answerUsage(
        { usage: { input_tokens: 1, output_tokens: 1, cache_creation: { ephemeral_1h_input_tokens: 50 } } },
        headers,
      ),
    ).toEqual({ ...counts, cache_creation_1h_tokens: 50 });
  });

  it("reads the invocation metrics of an invoke stream's last chunk, the only usage of a model without Claude's", () => {
    const watcher = new StreamWatcher(bedrockInvoke.stream, 0);
    watcher.push(
      Buffer.concat([
        chunk({ generation: "Hi", prompt_token_count: null, stop_reason: null }),
        chunk({
          generation: "",
          stop_reason: "stop",
          "amazon-bedrock-invocationMetrics": {
            inputTokenCount: 17,
            outputTokenCount: 4,
            invocationLatency: 300,
            firstByteLatency: 90,
            cacheReadInputTokenCount: 0,
            cacheWriteInputTokenCount: 0,
          },
        }),
      ]),
    );
    watcher.end();
    expect(watcher.usage).toMatchObject({ input_tokens: 17, output_tokens: 4, cached_input_tokens: 0 });
  });

  it("ends a stream its vendor broke off with an internalServerException, only between two messages", () => {
    const watcher = new StreamWatcher(bedrockConverse.stream, 0);
    const start = Buffer.from(eventMessage("messageStart", { role: "assistant" }));
    watcher.push(start.subarray(0, 7));
    expect(watcher.midEvent).toBe(true);
    watcher.push(start.subarray(7));
    expect(watcher.midEvent).toBe(false);
    const [exception] = codecMessages(watcher.broken("broke off"));
    expect(exception?.headers[":message-type"]?.value).toBe("exception");
    expect(exception?.headers[":exception-type"]?.value).toBe("internalServerException");
    expect(JSON.parse(Buffer.from(exception?.body ?? []).toString("utf8"))).toEqual({ message: "broke off" });
  });

  it("reads a ConverseStream's metadata event for its usage, and its text deltas", () => {
    const bytes = Buffer.concat([
      eventMessage("messageStart", { role: "assistant" }),
      eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hi " } }),
      eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "there" } }),
      eventMessage("contentBlockStop", { contentBlockIndex: 0 }),
      eventMessage("messageStop", { stopReason: "end_turn" }),
      eventMessage("metadata", {
        usage: { inputTokens: 9, outputTokens: 3, totalTokens: 12, cacheReadInputTokens: 0 },
        metrics: { latencyMs: 120 },
      }),
    ]);
    const watcher = new StreamWatcher(bedrockConverse.stream, 1000);
    watcher.push(bytes);
    watcher.end();
    expect(watcher.usage).toMatchObject({ input_tokens: 9, output_tokens: 3 });
    expect(watcher.completion()).toBe("Hi there");
    expect(watcher.events).toBe(6);
  });
});

describe("a Bedrock stream cut at a cap", () => {
  it("relays whole messages: the framing finds where each ends", () => {
    const { framing } = bedrockInvoke.stream;
    const first = Buffer.from(chunk(CLAUDE_EVENTS[0]));
    const both = Buffer.concat([first, chunk(CLAUDE_EVENTS[1])]);
    expect(framing.carries("application/vnd.amazon.eventstream")).toBe(true);
    expect(framing.carries("text/event-stream")).toBe(false);
    expect(framing.lastEventEnd(both.subarray(0, both.length - 1))).toBe(first.length);
    expect(framing.lastEventEnd(first.subarray(0, 10))).toBe(-1);
    expect(framing.lastEventEnd(both)).toBe(both.length);
    expect(framing.nextEventEnd(both, 0)).toBe(first.length);
  });

  it("ends an invoke stream with Claude's own ending in chunks: the open block stopped, max_tokens", () => {
    const watcher = new StreamWatcher(bedrockInvoke.stream, 0, true);
    watcher.push(Buffer.concat(CLAUDE_EVENTS.slice(0, 3).map(chunk)));
    const ending = messages(watcher.ending() as Uint8Array).map(({ type, payload }) => ({
      type,
      event: JSON.parse(Buffer.from(String(payload.bytes), "base64").toString("utf8")),
    }));
    expect(ending.map(({ type }) => type)).toEqual(["chunk", "chunk", "chunk"]);
    expect(ending.map(({ event }) => event.type)).toEqual([
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(ending[1]?.event.delta.stop_reason).toBe("max_tokens");
  });

  it("ends a ConverseStream with messageStop (max_tokens) and metadata carrying the usage so far", () => {
    const watcher = new StreamWatcher(bedrockConverse.stream, 0, true);
    watcher.push(
      eventMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x".repeat(30) } }),
    );
    expect(messages(watcher.ending() as Uint8Array)).toEqual([
      { type: "messageStop", payload: { stopReason: "max_tokens" } },
      {
        type: "metadata",
        payload: { usage: { inputTokens: 0, outputTokens: 10, totalTokens: 10 }, metrics: { latencyMs: 0 } },
      },
    ]);
  });
});
