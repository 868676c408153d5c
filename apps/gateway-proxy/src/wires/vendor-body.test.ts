import { describe, expect, it } from "vitest";
import { editForVendor, matchRoute, type Route } from "./index";
import { VERTEX_ANTHROPIC_VERSION } from "./vertex";

const route = (path: string): Route => {
  const matched = matchRoute(path);
  if (!matched) throw new Error(`no route ${path}`);
  return matched;
};

describe("editForVendor: the caller's body as the vendor takes it", () => {
  it("asks for a streamed chat's usage, except on Mistral, which refuses the field", () => {
    const chat = route("/v1/chat/completions");
    const openai = { model: "gpt", stream: true };
    editForVendor(openai, "azure_openai", chat, "deployment", true);
    expect(openai).toEqual({ model: "deployment", stream: true, stream_options: { include_usage: true } });
    const mistral = { model: "mistral-small-latest", stream: true };
    editForVendor(mistral, "mistral", chat, "mistral-small-latest", true);
    expect(mistral).toEqual({ model: "mistral-small-latest", stream: true });
  });

  it("takes the model out of a Claude body for Vertex and names Vertex's version", () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [] };
    expect(editForVendor(body, "vertex", route("/v1/messages"), "claude-sonnet-4-5@20250929", false)).toEqual(
      {},
    );
    expect(body).toEqual({ max_tokens: 10, messages: [], anthropic_version: VERTEX_ANTHROPIC_VERSION });
    const counting = { messages: [] };
    editForVendor(counting, "vertex", route("/v1/messages/count_tokens"), "claude-x@1", false);
    expect(counting).toMatchObject({ model: "claude-x@1" });
  });

  it("turns a Vertex-style Claude body into the Messages API's for Anthropic", () => {
    const body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 10, messages: [] };
    expect(editForVendor(body, "anthropic", route("/v1/messages"), "claude-sonnet-4-5", true)).toEqual({
      "anthropic-version": "2023-06-01",
    });
    expect(body).toEqual({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [] });
  });

  it("passes a Gemini body as it is", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    editForVendor(
      body,
      "vertex",
      route("/v1beta/models/gemini-2.5-pro:generateContent"),
      "gemini-2.5-pro",
      true,
    );
    expect(body).toEqual({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  });
});
