import { describe, expect, it } from "vitest";
import { readAnthropicUsage } from "./anthropic";
import { WIRES } from "./index";
import { readOpenAiUsage } from "./openai";
import { StreamWatcher } from "./stream-watcher";
import { answeringModel, completionText } from "./usage";

const encode = (text: string) => new TextEncoder().encode(text);

describe("reading usage", () => {
  it("reads chat, responses and anthropic usage with cache fields", () => {
    expect(
      readOpenAiUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 4 },
      }),
    ).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cached_input_tokens: 4,
      cache_creation_tokens: 0,
      cache_creation_1h_tokens: 0,
    });
    expect(
      readOpenAiUsage({ input_tokens: 8, output_tokens: 2, input_tokens_details: { cached_tokens: 3 } }),
    ).toEqual({
      input_tokens: 8,
      output_tokens: 2,
      cached_input_tokens: 3,
      cache_creation_tokens: 0,
      cache_creation_1h_tokens: 0,
    });
    const anthropic = readAnthropicUsage({
      input_tokens: 7,
      output_tokens: 9,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    });
    expect(anthropic).toEqual({
      input_tokens: 7,
      output_tokens: 9,
      cached_input_tokens: 100,
      cache_creation_tokens: 20,
      cache_creation_1h_tokens: 0,
    });
    expect(WIRES.anthropic.totalTokens(anthropic)).toBe(136);
  });

  it("extracts completion text", () => {
    expect(completionText({ choices: [{ message: { content: "hi" } }] })).toBe("hi");
    expect(completionText({ content: [{ type: "text", text: "yo" }] })).toBe("yo");
    expect(completionText({ output: [{ content: [{ type: "output_text", text: "ok" }] }] })).toBe("ok");
  });
});

describe("StreamWatcher", () => {
  it("reads OpenAI's final usage chunk across split chunks", () => {
    const watcher = new StreamWatcher(WIRES.openai.stream, 1000);
    const stream =
      'data: {"choices":[{"delta":{"content":"Hel"}}],"usage":null}\n\n' +
      'data: {"choices":[{"delta":{"content":"lo"}}],"usage":null}\n\n' +
      'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":6}}}\n\n' +
      "data: [DONE]\n\n";
    for (let i = 0; i < stream.length; i += 7) watcher.push(encode(stream.slice(i, i + 7)));
    watcher.end();
    expect(watcher.usage).toEqual({
      input_tokens: 12,
      output_tokens: 2,
      cached_input_tokens: 6,
      cache_creation_tokens: 0,
      cache_creation_1h_tokens: 0,
    });
    expect(watcher.completion()).toBe("Hello");
  });

  it("merges Anthropic's message_start and message_delta", () => {
    const watcher = new StreamWatcher(WIRES.anthropic.stream, 0);
    watcher.push(
      encode(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":50,"cache_creation_input_tokens":10,"output_tokens":1}}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}\n\n' +
          'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":30}}\n\n',
      ),
    );
    watcher.end();
    expect(watcher.usage).toEqual({
      input_tokens: 5,
      output_tokens: 30,
      cached_input_tokens: 50,
      cache_creation_tokens: 10,
      cache_creation_1h_tokens: 0,
    });
    expect(watcher.completion()).toBe("");
  });

  it("reads the Responses API's response.completed usage", () => {
    const watcher = new StreamWatcher(WIRES.openai.stream, 100);
    watcher.push(
      encode(
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"ok"}\n\n' +
          'event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      ),
    );
    expect(watcher.usage.input_tokens).toBe(3);
    expect(watcher.completion()).toBe("ok");
  });

  it("names the model the vendor says answered, from the events that carry usage and from a whole answer", () => {
    const chat = new StreamWatcher(WIRES.openai.stream, 0);
    chat.push(
      encode(
        'data: {"model":"gpt-4o-2024-08-06","choices":[{"delta":{"content":"x"}}],"usage":null}\n\n' +
          'data: {"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n',
      ),
    );
    const messages = new StreamWatcher(WIRES.anthropic.stream, 0);
    messages.push(
      encode(
        'data: {"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":5}}}\n\n',
      ),
    );
    const responses = new StreamWatcher(WIRES.openai.stream, 0);
    responses.push(
      encode(
        'data: {"type":"response.completed","response":{"model":"gpt-5","usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      ),
    );
    expect([chat.model, messages.model, responses.model]).toEqual([
      "gpt-4o-2024-08-06",
      "claude-sonnet-4-5-20250929",
      "gpt-5",
    ]);
    expect(answeringModel({ object: "chat.completion", model: "gpt-4o-mini-2024-07-18" })).toBe(
      "gpt-4o-mini-2024-07-18",
    );
    expect(answeringModel({ object: "list", data: [] })).toBeUndefined();
  });

  it("tracks a capped stream's generated output in each format, counting delta text only", () => {
    const chat = new StreamWatcher(WIRES.openai.stream, 0, true);
    const chunk = (content: string) =>
      `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`;
    chat.push(encode(chunk("") + chunk("abcdef") + chunk("ghi")));
    expect(chat.outputTokens()).toBe(3);
    const anthropic = new StreamWatcher(WIRES.anthropic.stream, 0, true);
    anthropic.push(
      encode(
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abcdefghi"}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":1}"}}\n\n',
      ),
    );
    // 9 characters of text, 9 of raw partial JSON (an escape counts as two).
    expect(anthropic.outputTokens()).toBe(6);
    const responses = new StreamWatcher(WIRES.openai.stream, 0, true);
    responses.push(
      encode(
        'data: {"type":"response.output_text.delta","delta":"abcdef"}\n\n' +
          'data: {"type":"response.completed","response":{"output":[{"content":[{"text":"abcdef"}]}],"usage":{"input_tokens":1,"output_tokens":2}}}\n\n',
      ),
    );
    expect(responses.outputTokens()).toBe(2);
  });

  it("answers whether the output reached a size exactly as outputTokens does, scanning only near it", () => {
    const chunk = (content: string) =>
      `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"}}]}\n\n`;
    const watcher = new StreamWatcher(WIRES.openai.stream, 0, true);
    for (let i = 0; i < 200; i++) {
      watcher.push(encode(chunk("x".repeat(i % 7))));
      const tokens = watcher.outputTokens();
      for (const size of [1, tokens, tokens + 1, 64, 512]) expect(watcher.reached(size)).toBe(tokens >= size);
    }
  });

  it("ends a stream in the vendor's own format", () => {
    const chat = new StreamWatcher(WIRES.openai.stream, 0, true);
    chat.push(
      encode(
        'data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
      ),
    );
    expect(chat.ending()).toBe(
      'data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n',
    );
    const anthropic = new StreamWatcher(WIRES.anthropic.stream, 0, true);
    anthropic.push(
      encode(
        'event: content_block_start\ndata: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}\n\n',
      ),
    );
    const events = String(anthropic.ending())
      .split("\n\n")
      .filter(Boolean)
      .map((event) => JSON.parse(event.split("data: ")[1] ?? "{}"));
    expect(events.map((event) => event.type)).toEqual([
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[0].index).toBe(2);
    expect(events[1].delta.stop_reason).toBe("max_tokens");
    const responses = new StreamWatcher(WIRES.openai.stream, 0, true);
    responses.push(
      encode(
        'data: {"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress"}}\n\n',
      ),
    );
    expect(JSON.parse(String(responses.ending()).split("data: ")[1] ?? "{}")).toMatchObject({
      type: "response.incomplete",
      response: { id: "resp_1", status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
  });
});
