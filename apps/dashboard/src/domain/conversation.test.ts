import { describe, expect, it } from "vitest";
import { parsePrompt, turnText } from "./conversation";

/** A capture as the proxy writes it: prompt fields in order, JSON ones on one line each. */
const captured = (...fields: unknown[]) =>
  fields.map((field) => (typeof field === "string" ? field : JSON.stringify(field))).join("\n");

describe("a captured prompt as a conversation", () => {
  it("reads OpenAI chat messages, tool calls and tool results", () => {
    const prompt = captured([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in Paris?" },
          { type: "image_url", image_url: {} },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "18 °C" },
    ]);
    expect(parsePrompt(prompt)).toEqual({
      kind: "turns",
      turns: [
        { role: "system", parts: [{ kind: "text", text: "Be brief." }] },
        {
          role: "user",
          parts: [
            { kind: "text", text: "Weather in Paris?" },
            { kind: "omitted", what: "image" },
          ],
        },
        { role: "assistant", parts: [{ kind: "tool_call", name: "weather", input: '{"city":"Paris"}' }] },
        { role: "tool", parts: [{ kind: "tool_result", text: "18 °C" }] },
      ],
    });
  });

  it("reads Anthropic messages with the system prompt captured after them, as text or blocks", () => {
    const messages = [
      { role: "user", content: "Fix the bug" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "…" },
          { type: "tool_use", id: "t1", name: "read_file", input: { path: "a.ts" } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "code" }] }],
      },
    ];
    const text = parsePrompt(captured(messages, "You are a coding agent.\nUse tools."));
    expect(text.kind === "turns" && text.turns.map((t) => t.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
    expect(text.kind === "turns" && text.turns[0]?.parts).toEqual([
      { kind: "text", text: "You are a coding agent.\nUse tools." },
    ]);
    expect(text.kind === "turns" && text.turns[2]?.parts).toEqual([
      { kind: "omitted", what: "reasoning" },
      { kind: "tool_call", name: "read_file", input: '{"path":"a.ts"}' },
    ]);
    expect(text.kind === "turns" && text.turns[3]?.parts).toEqual([{ kind: "tool_result", text: "code" }]);
    const blocks = parsePrompt(
      captured(messages, [{ type: "text", text: "Cached system", cache_control: {} }]),
    );
    expect(blocks.kind === "turns" && blocks.turns[0]).toEqual({
      role: "system",
      parts: [{ kind: "text", text: "Cached system" }],
    });
  });

  it("reads Responses input items and a whole request body", () => {
    const items = parsePrompt(
      captured(
        [
          { role: "user", content: [{ type: "input_text", text: "List files" }] },
          { type: "function_call", call_id: "f1", name: "ls", arguments: "{}" },
          { type: "function_call_output", call_id: "f1", output: "a.ts" },
        ],
        "Answer in English.",
      ),
    );
    expect(items.kind === "turns" && items.turns.map((t) => t.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
    const body = parsePrompt(
      JSON.stringify({ system: "Be kind.", messages: [{ role: "user", content: "Hi" }] }),
    );
    expect(body.kind === "turns" && body.turns.map(turnText)).toEqual(["Be kind.", "Hi"]);
  });

  it("keeps unknown blocks as JSON and unknown shapes, plain text and cut captures raw", () => {
    const odd = parsePrompt(captured([{ role: "user", content: [{ type: "video", url: "v" }] }]));
    expect(odd.kind === "turns" && odd.turns[0]?.parts).toEqual([
      { kind: "json", text: '{"type":"video","url":"v"}' },
    ]);
    const cut = captured([{ role: "user", content: "Summarise" }]).slice(0, 20);
    expect(parsePrompt(cut)).toEqual({ kind: "raw", text: cut });
    expect(parsePrompt("Tell me a joke")).toEqual({ kind: "raw", text: "Tell me a joke" });
    expect(parsePrompt('[{"text":"no role"}]').kind).toBe("raw");
    expect(parsePrompt("[]").kind).toBe("raw");
    expect(parsePrompt('"a string"').kind).toBe("raw");
  });

  it("copies a turn as text, tool calls as calls", () => {
    expect(
      turnText({
        role: "assistant",
        parts: [
          { kind: "text", text: "Let me look." },
          { kind: "tool_call", name: "ls", input: "{}" },
          { kind: "omitted", what: "image" },
        ],
      }),
    ).toBe("Let me look.\n\nls({})\n\n[image]");
  });
});
