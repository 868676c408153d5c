import { describe, expect, it } from "vitest";
import { streamUsage } from "../upstream/forward";
import { readGeminiUsage } from "./gemini";
import { WIRES } from "./index";
import { StreamWatcher } from "./stream-watcher";
import { answeringModel, completionText } from "./usage";

const usageMetadata = {
  promptTokenCount: 1_200,
  cachedContentTokenCount: 1_000,
  toolUsePromptTokenCount: 30,
  candidatesTokenCount: 40,
  thoughtsTokenCount: 300,
  totalTokenCount: 1_570,
};

const answer = (text: string, usage: object | undefined, extra: object = {}) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...extra }],
  ...(usage ? { usageMetadata: usage } : {}),
  modelVersion: "gemini-2.5-flash",
  responseId: "resp-1",
});

describe("Gemini usageMetadata", () => {
  it("counts the tool-use prompt as input, thinking as output, and the cache inside the prompt", () => {
    const usage = readGeminiUsage(usageMetadata);
    expect(usage).toEqual({
      input_tokens: 1_230,
      output_tokens: 340,
      cached_input_tokens: 1_000,
      cache_creation_tokens: 0,
      cache_creation_1h_tokens: 0,
    });
    expect(WIRES.gemini.totalTokens(usage)).toBe(1_570);
  });

  it("reads a whole answer, and a stream sent as one JSON array from its last usage", () => {
    expect(WIRES.gemini.answerUsage(answer("hi", usageMetadata), {}).output_tokens).toBe(340);
    const array = [
      answer("Hel", { promptTokenCount: 10 }),
      answer("lo", { promptTokenCount: 10, candidatesTokenCount: 2 }),
    ];
    expect(WIRES.gemini.answerUsage(array, {})).toMatchObject({ input_tokens: 10, output_tokens: 2 });
    expect(completionText(answer("Hello", undefined))).toBe("Hello");
    expect(answeringModel(answer("x", undefined))).toBe("gemini-2.5-flash");
  });

  it("keeps the latest counts of an SSE stream, whose chunks repeat the counts so far", () => {
    const watcher = new StreamWatcher(WIRES.gemini.stream, 100);
    const events = [
      answer("Hel", { promptTokenCount: 10, totalTokenCount: 10 }),
      answer(
        "lo",
        { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 5 },
        { finishReason: "STOP" },
      ),
    ];
    watcher.push(Buffer.from(events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join("")));
    const streamed = streamUsage(watcher);
    expect(streamed.usage).toMatchObject({ input_tokens: 10, output_tokens: 7 });
    expect(streamed.completion).toBe("Hello");
    expect(streamed.responseModel).toBe("gemini-2.5-flash");
  });

  it("ends a capped stream with Gemini's own last chunk: finishReason MAX_TOKENS", () => {
    const watcher = new StreamWatcher(WIRES.gemini.stream, 0, true);
    watcher.push(
      Buffer.from(`data: ${JSON.stringify(answer("a".repeat(30), { promptTokenCount: 12 }))}\n\n`),
    );
    const ending = String(watcher.ending());
    expect(ending.startsWith("data: ")).toBe(true);
    expect(ending.endsWith("\n\n")).toBe(true);
    expect(JSON.parse(ending.slice(6))).toEqual({
      candidates: [
        { content: { role: "model", parts: [{ text: "" }] }, finishReason: "MAX_TOKENS", index: 0 },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 10, totalTokenCount: 22 },
      modelVersion: "gemini-2.5-flash",
      responseId: "resp-1",
    });
  });
});
