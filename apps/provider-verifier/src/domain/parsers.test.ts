import { describe, expect, it } from "vitest";
import { parseListing } from "./parsers";

describe("parseListing", () => {
  it("reads OpenAI's {data:[{id}]} and tolerates extra fields", () => {
    expect(
      parseListing("openai_data", {
        object: "list",
        data: [{ id: "gpt-4o", object: "model", owned_by: "openai" }, { id: "ft:custom" }],
      }),
    ).toEqual({ ok: true, page: { models: [{ id: "gpt-4o" }, { id: "ft:custom" }] } });
  });

  it("reads Anthropic's page and its cursor", () => {
    expect(
      parseListing("anthropic_data", {
        data: [{ id: "claude-sonnet-4-20250514", display_name: "Claude Sonnet 4", type: "model" }],
        has_more: true,
        first_id: "claude-sonnet-4-20250514",
        last_id: "claude-sonnet-4-20250514",
      }),
    ).toEqual({
      ok: true,
      page: {
        models: [{ id: "claude-sonnet-4-20250514", label: "Claude Sonnet 4" }],
        next: { after_id: "claude-sonnet-4-20250514" },
      },
    });
    expect(parseListing("anthropic_data", { data: [], has_more: false, last_id: null })).toEqual({
      ok: true,
      page: { models: [] },
    });
  });

  it("reads Azure deployments: the deployment id is listed, the model is what prices it", () => {
    expect(
      parseListing("azure_data", { data: [{ id: "prod-4o", model: "gpt-4o", status: "succeeded" }] }),
    ).toEqual({
      ok: true,
      page: { models: [{ id: "prod-4o", priceAs: "gpt-4o", label: "prod-4o (gpt-4o)" }] },
    });
  });

  it("reads Vertex publisher models by the last segment of their name", () => {
    expect(
      parseListing("vertex_publisher_models", {
        publisherModels: [{ name: "publishers/google/models/gemini-2.0-flash-001", versionId: "001" }],
        nextPageToken: "abc",
      }),
    ).toEqual({ ok: true, page: { models: [{ id: "gemini-2.0-flash-001" }], next: { pageToken: "abc" } } });
    expect(parseListing("vertex_publisher_models", {})).toEqual({ ok: true, page: { models: [] } });
  });

  it("reads Bedrock's foundation models that can be called on demand, and its inference profiles with their token", () => {
    expect(
      parseListing("bedrock_models", {
        modelSummaries: [
          {
            modelId: "anthropic.claude-sonnet-4-20250514-v1:0",
            modelName: "Claude Sonnet 4",
            providerName: "Anthropic",
            inferenceTypesSupported: ["ON_DEMAND", "INFERENCE_PROFILE"],
          },
          {
            modelId: "anthropic.claude-opus-4-1-20250805-v1:0",
            inferenceTypesSupported: ["INFERENCE_PROFILE"],
          },
          { modelId: "amazon.titan-embed-text-v2:0" },
        ],
      }),
    ).toEqual({
      ok: true,
      page: {
        models: [
          { id: "anthropic.claude-sonnet-4-20250514-v1:0", label: "Claude Sonnet 4" },
          { id: "amazon.titan-embed-text-v2:0" },
        ],
      },
    });
    expect(
      parseListing("bedrock_models", {
        inferenceProfileSummaries: [
          {
            inferenceProfileId: "us.anthropic.claude-opus-4-1-20250805-v1:0",
            inferenceProfileName: "US Anthropic Claude Opus 4.1",
            type: "SYSTEM_DEFINED",
          },
        ],
        nextToken: "page-2",
      }),
    ).toEqual({
      ok: true,
      page: {
        models: [{ id: "us.anthropic.claude-opus-4-1-20250805-v1:0", label: "US Anthropic Claude Opus 4.1" }],
        next: { nextToken: "page-2" },
      },
    });
    expect(parseListing("bedrock_models", { inferenceProfileSummaries: [] })).toEqual({
      ok: true,
      page: { models: [] },
    });
    expect(parseListing("bedrock_models", { data: [] })).toEqual({
      ok: false,
      why: "(root): neither modelSummaries nor inferenceProfileSummaries",
    });
  });

  it("reads Mistral's {data:[{id, name}]}", () => {
    expect(
      parseListing("mistral_data", {
        data: [
          { id: "mistral-large-latest", name: "mistral-large-2512", capabilities: {} },
          { id: "x", name: null },
        ],
      }),
    ).toEqual({
      ok: true,
      page: { models: [{ id: "mistral-large-latest", label: "mistral-large-2512" }, { id: "x" }] },
    });
  });

  it.each([
    ["openai_data", { models: [] }],
    ["openai_data", { data: [{ name: "no id" }] }],
    ["openai_data", "hello"],
    ["anthropic_data", { data: "nope" }],
    ["azure_data", null],
    ["vertex_publisher_models", { publisherModels: [{}] }],
    ["mistral_data", [{ id: "x" }]],
    ["cloudflare_gateway", { result: [] }],
  ] as const)("refuses a %s body in another shape: %j", (shape, body) => {
    expect(parseListing(shape, body)).toMatchObject({ ok: false });
  });
});
