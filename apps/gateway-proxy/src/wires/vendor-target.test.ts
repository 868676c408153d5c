import { describe, expect, it } from "vitest";
import { matchRoute, type Route, vendorTarget } from "./index";

const route = (path: string): Route => {
  const matched = matchRoute(path);
  if (!matched) throw new Error(`no route ${path}`);
  return matched;
};

const VERTEX = "https://us-east5-aiplatform.googleapis.com/v1/projects/acme/locations/us-east5";

describe("vendorTarget: where each wire goes at each kind of provider", () => {
  it("sends Azure's deployment paths to the provider's OpenAI-style path, api-version dropped", () => {
    const target = vendorTarget(
      "https://res.openai.azure.com/openai/v1",
      "azure_openai",
      route("/openai/deployments/gpt5/chat/completions"),
      "gpt5",
      false,
      "api-version=2024-10-21",
    );
    expect(target?.origin).toBe("https://res.openai.azure.com");
    expect(target?.pathWithQuery).toBe("/openai/v1/chat/completions");
  });

  it("sends an Azure provider written as its resource root to its v1 API under /openai", () => {
    const chat = route("/openai/v1/chat/completions");
    for (const root of ["https://res.openai.azure.com", "https://res.openai.azure.com/"]) {
      expect(vendorTarget(root, "azure_openai", chat, "gpt5", false, "")?.pathWithQuery).toBe(
        "/openai/v1/chat/completions",
      );
    }
    expect(
      vendorTarget("https://res.openai.azure.com/openai", "azure_openai", chat, "gpt5", false, "")?.path,
    ).toBe("/openai/v1/chat/completions");
    // Another OpenAI-style vendor at its root keeps its /v1.
    expect(vendorTarget("https://api.openai.com", "openai", chat, "gpt5", false, "")?.path).toBe(
      "/v1/chat/completions",
    );
  });

  it("sends the OpenAI wire to Vertex's OpenAI-format endpoint", () => {
    const chat = route("/v1/chat/completions");
    expect(vendorTarget(VERTEX, "vertex", chat, "google/gemini-2.5-flash", true, "")?.pathWithQuery).toBe(
      "/v1/projects/acme/locations/us-east5/endpoints/openapi/chat/completions",
    );
    expect(
      vendorTarget(`${VERTEX}/endpoints/openapi`, "vertex", route("/v1/embeddings"), "m", false, "")?.path,
    ).toBe("/v1/projects/acme/locations/us-east5/endpoints/openapi/embeddings");
  });

  it("sends Claude on Vertex to Vertex, and to Anthropic as the Messages API", () => {
    const claude = route(
      "/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
    );
    expect(
      vendorTarget(VERTEX, "vertex", claude, "claude-sonnet-4-5@20250929", true, "")?.pathWithQuery,
    ).toBe(
      "/v1/projects/acme/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
    );
    expect(
      vendorTarget("https://api.anthropic.com", "anthropic", claude, "claude-sonnet-4-5", true, "")?.path,
    ).toBe("/v1/messages");
    // Claude Code's Messages API traffic reaches a Vertex provider the same way.
    expect(
      vendorTarget(VERTEX, "vertex", route("/v1/messages"), "claude-haiku-4-5@20251001", false, "beta=true")
        ?.pathWithQuery,
    ).toBe(
      "/v1/projects/acme/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict",
    );
    expect(
      vendorTarget(VERTEX, "vertex", route("/v1/messages/count_tokens"), "claude-x", false, "")?.path,
    ).toBe("/v1/projects/acme/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict");
  });

  it("sends Gemini to the Gemini API and to Vertex, alt=sse kept and the caller's key never", () => {
    const stream = route("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    expect(
      vendorTarget(
        "https://generativelanguage.googleapis.com/v1beta",
        "gemini",
        stream,
        "gemini-2.5-flash",
        true,
        "alt=sse&key=agn_x",
      )?.pathWithQuery,
    ).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(
      vendorTarget(`${VERTEX}/endpoints/openapi`, "vertex", stream, "gemini-2.5-flash", true, "alt=sse")
        ?.pathWithQuery,
    ).toBe(
      "/v1/projects/acme/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
  });

  it("keeps a model in its path segment", () => {
    const target = vendorTarget(
      VERTEX,
      "vertex",
      route("/v1beta/models/m:generateContent"),
      "../../x?y",
      false,
      "",
    );
    expect(target?.path).toBe(
      "/v1/projects/acme/locations/us-east5/publishers/google/models/..%2F..%2Fx%3Fy:generateContent",
    );
  });

  it("has no target at a Vertex upstream_url without its project", () => {
    const gemini = route("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(
      vendorTarget("https://us-east5-aiplatform.googleapis.com", "vertex", gemini, "g", false, ""),
    ).toBeUndefined();
  });
});
