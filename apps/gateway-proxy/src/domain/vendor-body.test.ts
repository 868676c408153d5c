import { describe, expect, it } from "vitest";
import { editForVendor, VERTEX_ANTHROPIC_VERSION } from "./vendor-body";

describe("editForVendor: the caller's body as the vendor takes it", () => {
  it("asks for a streamed chat's usage, except on Mistral, which refuses the field", () => {
    const openai = { model: "gpt", stream: true };
    editForVendor(openai, "openai", "chat", "azure_openai", "deployment", true);
    expect(openai).toEqual({ model: "deployment", stream: true, stream_options: { include_usage: true } });
    const mistral = { model: "mistral-small-latest", stream: true };
    editForVendor(mistral, "openai", "chat", "mistral", "mistral-small-latest", true);
    expect(mistral).toEqual({ model: "mistral-small-latest", stream: true });
  });

  it("takes the model out of a Claude body for Vertex and names Vertex's version", () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [] };
    expect(
      editForVendor(body, "anthropic", "messages", "vertex", "claude-sonnet-4-5@20250929", false),
    ).toEqual({
      headers: {},
    });
    expect(body).toEqual({ max_tokens: 10, messages: [], anthropic_version: VERTEX_ANTHROPIC_VERSION });
    const counting = { messages: [] };
    editForVendor(counting, "anthropic", "count_tokens", "vertex", "claude-x@1", false);
    expect(counting).toMatchObject({ model: "claude-x@1" });
  });

  it("turns a Vertex-style Claude body into the Messages API's for Anthropic", () => {
    const body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 10, messages: [] };
    expect(editForVendor(body, "anthropic", "messages", "anthropic", "claude-sonnet-4-5", true)).toEqual({
      headers: { "anthropic-version": "2023-06-01" },
    });
    expect(body).toEqual({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [] });
  });

  it("passes a Gemini body as it is", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    editForVendor(body, "gemini", "generate_content", "vertex", "gemini-2.5-pro", true);
    expect(body).toEqual({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  });
});
