import { eventually } from "@agentnet/testkit";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicClient, configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";
import type { FakeUpstream } from "../upstream";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe("streaming", () => {
  it("passes chunks through before the upstream finished and reads usage from the final chunk", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    stack.openai.usage = { input: 1_000, output: 40, cached: 500, creation: 0 };
    stack.openai.holdStream = true;
    try {
      const stream = await openaiClient(stack, account.token).chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      });
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      // The upstream is still holding the rest of its answer: this chunk was not buffered.
      expect(first.done).toBe(false);
      expect(stack.openai.last?.body.stream_options).toEqual({ include_usage: true });
      stack.openai.release();
      let text = "";
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        text += next.value.choices[0]?.delta.content ?? "";
      }
      expect(text).toBe("Hello from upstream");
    } finally {
      stack.openai.holdStream = false;
    }
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({
      stream: true,
      status_code: 200,
      input_tokens: 1_000,
      cached_input_tokens: 500,
      output_tokens: 40,
    });
    // gpt-4o-mini: 500 × $0.15/M + 500 × $0.075/M + 40 × $0.60/M
    expect(event?.cost_usd).toBe(0.0001365);
  });

  it("reads Anthropic usage from message_start and message_delta", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    stack.anthropic.usage = { input: 3_000, output: 700, cached: 40_000, creation: 5_000 };
    const stream = await anthropicClient(stack, account.token).messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 1000,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({
      stream: true,
      input_tokens: 3_000,
      output_tokens: 700,
      cached_input_tokens: 40_000,
      cache_creation_tokens: 5_000,
    });
    // Haiku 4.5: 3k × $1/M + 40k × $0.10/M + 5k × $1.25/M + 700 × $5/M = 0.003 + 0.004 + 0.00625 + 0.0035
    expect(event?.cost_usd).toBe(0.01675);
  });

  it("a client abort cancels the upstream request and still publishes an event", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    stack.anthropic.usage = { input: 50, output: 9, cached: 0, creation: 0 };
    stack.anthropic.holdStream = true;
    const abortedBefore = stack.anthropic.aborted;
    try {
      const controller = new AbortController();
      const response = await fetch(`${stack.proxy.url}/v1/messages`, {
        method: "POST",
        headers: {
          "x-api-key": account.token,
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
        },
        body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 10, stream: true, messages: [] }),
        signal: controller.signal,
      });
      const reader = response.body?.getReader();
      const first = await reader?.read();
      expect(new TextDecoder().decode(first?.value)).toContain("message_start");
      controller.abort();
      await eventually(() => stack.anthropic.aborted > abortedBefore);
    } finally {
      stack.anthropic.holdStream = false;
      stack.anthropic.release();
    }
    const [event] = await account.events.waitFor(1);
    // What was known when the client left: message_start's input usage.
    expect(event).toMatchObject({ status_code: 499, decision: "allow", stream: true, input_tokens: 50 });
  });

  it("charges an OpenAI stream the client left before its usage report", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    stack.openai.holdStream = true;
    const abortedBefore = stack.openai.aborted;
    const messages = [{ role: "user", content: "y".repeat(398) }];
    try {
      const controller = new AbortController();
      const response = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages }),
        signal: controller.signal,
      });
      await response.body?.getReader().read();
      controller.abort();
      await eventually(() => stack.openai.aborted > abortedBefore);
    } finally {
      stack.openai.holdStream = false;
      stack.openai.release();
    }
    const [event] = await account.events.waitFor(1);
    const promptTokens = Math.ceil(JSON.stringify(messages).length / 4);
    expect(event).toMatchObject({ status_code: 499, input_tokens: promptTokens, output_tokens: 1 });
    expect(event?.cost_usd).toBeGreaterThan(0);
  });
});

describe("a stream its upstream breaks off", () => {
  it("ends with the vendor's error event, which the Anthropic and OpenAI SDKs raise; each row is a 502", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id, account.openaiProvider.id]);
    stack.anthropic.usage = { input: 50, output: 9, cached: 0, creation: 0 };
    const brokenOff = async (upstream: FakeUpstream, stream: AsyncIterable<unknown>) => {
      const events = stream[Symbol.asyncIterator]();
      await events.next();
      upstream.breakHeld();
      for (;;) if ((await events.next()).done) return undefined;
    };
    stack.anthropic.holdStream = true;
    stack.openai.holdStream = true;
    try {
      const messages = anthropicClient(stack, account.token).messages.stream({
        model: "claude-haiku-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      });
      const anthropicFailure = await brokenOff(stack.anthropic, messages).catch((error: unknown) => error);
      expect(anthropicFailure).toBeInstanceOf(Anthropic.APIError);
      expect(String(anthropicFailure)).toMatch(/broke off/);

      const chunks = await openaiClient(stack, account.token).chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      });
      const openaiFailure = await brokenOff(stack.openai, chunks).catch((error: unknown) => error);
      expect(openaiFailure).toBeInstanceOf(OpenAI.APIError);
      expect(String(openaiFailure)).toMatch(/broke off/);
    } finally {
      stack.anthropic.holdStream = false;
      stack.openai.holdStream = false;
    }
    const events = await account.events.waitFor(2);
    expect(events.map((event) => event.status_code)).toEqual([502, 502]);
    // Anthropic's message_start had said its input usage before the break.
    expect(events).toContainEqual(expect.objectContaining({ stream: true, input_tokens: 50 }));
  });
});

describe("prompt capture", () => {
  it("captures prompt and completion only with collection and a capturing guardrail, redacting PII", async () => {
    const account = await stack.newAccount({ enable_prompt_collection: true });
    const setup = configure(stack, account);
    const capture = await setup.guardrail({ prompt_capture: { enabled: true, redact_pii: true } });
    await setup.policy([account.openaiProvider.id], { guardrail_ids: [capture.id] });
    stack.openai.reply = "Sure, I will email bob@corp.example.com";
    try {
      await openaiClient(stack, account.token).chat.completions.create({
        model: "gpt-4o",
        messages: [
          {
            role: "user",
            content: "Mail jane@example.com, card 4111 1111 1111 1111, key sk-proj-abcdefghijklmnop1234",
          },
        ],
      });
    } finally {
      stack.openai.reply = "Hello from upstream";
    }
    const [event] = await account.events.waitFor(1);
    expect(event?.request_prompt).toContain("[EMAIL]");
    expect(event?.request_prompt).toContain("[CARD]");
    expect(event?.request_prompt).toContain("[SECRET]");
    expect(event?.request_prompt).not.toContain("jane@example.com");
    expect(event?.request_prompt).not.toContain("4111");
    expect(event?.response_completion).toBe("Sure, I will email [EMAIL]");
  });

  it("captures nothing when the account's prompt collection is off", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    const capture = await setup.guardrail({ prompt_capture: { enabled: true, redact_pii: false } });
    await setup.policy([account.openaiProvider.id], { guardrail_ids: [capture.id] });
    await openaiClient(stack, account.token).chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hello" }],
    });
    const [event] = await account.events.waitFor(1);
    expect(event?.request_prompt).toBeUndefined();
    expect(event?.response_completion).toBeUndefined();
  });

  it("blanks source_ip, host and path when log collection is off", async () => {
    const account = await stack.newAccount({ enable_log_collection: false });
    await configure(stack, account).policy([account.openaiProvider.id]);
    await openaiClient(stack, account.token).chat.completions.create({ model: "gpt-4o", messages: [] });
    const [event] = await account.events.waitFor(1);
    expect(event).toMatchObject({ logged: false, source_ip: "", host: "", path: "", decision: "allow" });
  });
});
