import { describe, expect, it } from "vitest";
import { anthropic } from "./anthropic";
import { gemini } from "./gemini";
import { matchRoute, wireOfUnknownPath } from "./index";
import { openai } from "./openai";

describe("matchRoute: each vendor's own paths", () => {
  it("serves OpenAI's and Anthropic's paths as before", () => {
    expect(matchRoute("/v1/chat/completions")).toMatchObject({
      wire: openai,
      operation: "chat",
      pathModel: undefined,
    });
    expect(matchRoute("/v1/messages/count_tokens")).toMatchObject({
      wire: anthropic,
      operation: "count_tokens",
    });
  });

  it("serves Azure's v1 API and its deployments, the deployment naming the model", () => {
    expect(matchRoute("/openai/v1/responses")).toMatchObject({
      ingress: "azure",
      wire: openai,
      operation: "responses",
    });
    expect(matchRoute("/openai/deployments/my-gpt%2D5/chat/completions")).toEqual({
      ingress: "azure",
      wire: openai,
      operation: "chat",
      label: "/openai/deployments/{deployment}/chat/completions",
      pathModel: "my-gpt-5",
      streams: false,
    });
    expect(matchRoute("/openai/deployments/x/completions")).toBeUndefined();
  });

  it("serves the Gemini API under v1beta and v1, a stream by its method", () => {
    expect(matchRoute("/v1beta/models/gemini-2.5-flash:streamGenerateContent")).toEqual({
      ingress: "gemini",
      wire: gemini,
      operation: "generate_content",
      label: "/v1beta/models/{model}:streamGenerateContent",
      pathModel: "gemini-2.5-flash",
      streams: true,
    });
    expect(matchRoute("/v1/models/gemini-2.5-pro:countTokens")).toMatchObject({ operation: "count_tokens" });
    expect(matchRoute("/v1beta/models/gemini-2.5-pro:embedContent")).toBeUndefined();
  });

  it("serves Vertex's Gemini and Claude paths, the label free of project, location and model", () => {
    const base = "/v1/projects/p-1/locations/us-east5/publishers";
    expect(matchRoute(`${base}/google/models/gemini-2.5-pro:generateContent`)).toMatchObject({
      ingress: "vertex_gemini",
      wire: gemini,
      pathModel: "gemini-2.5-pro",
      label: "/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent",
    });
    expect(matchRoute(`${base}/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict`)).toMatchObject({
      ingress: "vertex_anthropic",
      wire: anthropic,
      operation: "messages",
      pathModel: "claude-sonnet-4-5@20250929",
      streams: true,
    });
    expect(matchRoute(`${base}/anthropic/models/count-tokens:rawPredict`)).toMatchObject({
      operation: "count_tokens",
      pathModel: undefined,
    });
    expect(matchRoute(`${base}/anthropic/models/claude-x:predict`)).toBeUndefined();
    expect(matchRoute("/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent")).toMatchObject({
      ingress: "vertex_gemini",
      label: "/v1beta1/publishers/google/models/{model}:generateContent",
    });
  });

  it("answers a path it does not serve in the wire the path looks like", () => {
    expect(wireOfUnknownPath("/v1beta/files", {})).toBe(gemini);
    expect(wireOfUnknownPath("/v1/messages/batches", {})).toBe(anthropic);
    expect(wireOfUnknownPath("/v1/completions", {})).toBe(openai);
  });
});
