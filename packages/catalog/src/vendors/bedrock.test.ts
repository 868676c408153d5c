import { describe, expect, it } from "vitest";
import { findCatalogModel, findCatalogProvider } from "../catalog";
import { BEDROCK_ANTHROPIC_BETAS, VERTEX_ANTHROPIC_BETAS } from "./anthropic-betas";

const bedrockModel = (id: string) => {
  const found = findCatalogModel("bedrock_api", id);
  if (!found) throw new Error(`no Bedrock model ${id}`);
  return found;
};

const anthropicModel = (id: string) => {
  const found = findCatalogModel("anthropic_api", id);
  if (!found) throw new Error(`no Anthropic model ${id}`);
  return found;
};

const RATES = [
  "input_per_1k",
  "output_per_1k",
  "cached_input_per_1k",
  "cache_read_per_1k",
  "cache_creation_per_1k",
] as const;

describe("bedrock_api", () => {
  it("is reached through the regional runtime host, with a bearer API key, on the bedrock flavor", () => {
    expect(findCatalogProvider("bedrock_api")).toMatchObject({
      name: "Amazon Bedrock",
      default_host: "bedrock-runtime.{region}.amazonaws.com",
      auth_header_name: "Authorization",
      auth_header_template: ["Bearer $", "{API_KEY}"].join(""),
      api_flavor: "bedrock",
      pricing_surfaces: ["input", "output", "cache_read", "cache_creation"],
      listing: {
        path: "/foundation-models",
        more_paths: ["/inference-profiles?maxResults=1000"],
        shape: "bedrock_models",
      },
    });
  });

  it("names Claude as Bedrock does: foundation model ids and their us., eu. and global. profiles", () => {
    for (const base of [
      "anthropic.claude-opus-4-6-v1",
      "anthropic.claude-sonnet-4-6",
      "anthropic.claude-opus-4-5-20251101-v1:0",
      "anthropic.claude-sonnet-4-5-20250929-v1:0",
      "anthropic.claude-haiku-4-5-20251001-v1:0",
      "anthropic.claude-sonnet-4-20250514-v1:0",
    ]) {
      for (const id of [base, `us.${base}`, `eu.${base}`, `global.${base}`]) {
        expect(findCatalogModel("bedrock_api", id)?.id, id).toBe(id);
      }
    }
    // Opus 4.1 has a US profile only.
    expect(findCatalogModel("bedrock_api", "us.anthropic.claude-opus-4-1-20250805-v1:0")).toBeDefined();
    expect(findCatalogModel("bedrock_api", "global.anthropic.claude-opus-4-1-20250805-v1:0")).toBeUndefined();
  });

  it("prices the global profiles at Anthropic's rates, cache and long-context tier included", () => {
    for (const [id, anthropicId] of [
      ["global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
      ["global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"],
      ["global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"],
    ] as const) {
      const { id: _id, label: _label, aliases: _aliases, ...onBedrock } = bedrockModel(id);
      const { id: _a, label: _b, aliases: _c, ...listed } = anthropicModel(anthropicId);
      expect(onBedrock, id).toEqual(listed);
    }
  });

  it("charges 10% more in-region and on the us./eu. profiles from Sonnet 4.5 on, every rate and the tier", () => {
    const global = bedrockModel("global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    for (const id of [
      "anthropic.claude-sonnet-4-5-20250929-v1:0",
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
    ]) {
      const regional = bedrockModel(id);
      for (const rate of RATES)
        expect(regional[rate], `${id} ${rate}`).toBe(Number((global[rate] * 1.1).toPrecision(12)));
    }
    expect(bedrockModel("eu.anthropic.claude-sonnet-4-5-20250929-v1:0")).toMatchObject({
      input_per_1k: 0.0033,
      output_per_1k: 0.0165,
      cache_read_per_1k: 0.00033,
      cache_creation_per_1k: 0.004125,
      long_context: { above_input_tokens: 200_000, input_per_1k: 0.0066, output_per_1k: 0.02475 },
    });
    expect(bedrockModel("us.anthropic.claude-opus-4-6-v1")).toMatchObject({
      input_per_1k: 0.0055,
      output_per_1k: 0.0275,
    });
    expect(bedrockModel("anthropic.claude-haiku-4-5-20251001-v1:0")).toMatchObject({
      input_per_1k: 0.0011,
      output_per_1k: 0.0055,
    });
  });

  it("charges the same everywhere for the models from before the regional premium", () => {
    const sonnet4 = anthropicModel("claude-sonnet-4");
    for (const id of [
      "anthropic.claude-sonnet-4-20250514-v1:0",
      "eu.anthropic.claude-sonnet-4-20250514-v1:0",
    ]) {
      expect(bedrockModel(id).input_per_1k).toBe(sonnet4.input_per_1k);
      expect(bedrockModel(id).long_context).toEqual(sonnet4.long_context);
    }
    expect(bedrockModel("us.anthropic.claude-opus-4-1-20250805-v1:0").output_per_1k).toBe(0.075);
  });

  it("prices Anthropic's ids by the global profile, or the US one where there is none", () => {
    expect(findCatalogModel("bedrock_api", "claude-sonnet-4-5")?.id).toBe(
      "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    );
    expect(findCatalogModel("bedrock_api", "claude-sonnet-4-5-20250929")?.id).toBe(
      "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    );
    expect(findCatalogModel("bedrock_api", "claude-opus-4-1")?.id).toBe(
      "us.anthropic.claude-opus-4-1-20250805-v1:0",
    );
  });

  it("lets through the betas Bedrock takes, and not those it refuses", () => {
    expect(findCatalogProvider("bedrock_api")?.anthropic_betas).toEqual(BEDROCK_ANTHROPIC_BETAS);
    expect(BEDROCK_ANTHROPIC_BETAS).toEqual([...BEDROCK_ANTHROPIC_BETAS].sort());
    expect(BEDROCK_ANTHROPIC_BETAS).toEqual(
      expect.arrayContaining([
        "context-1m-2025-08-07",
        "interleaved-thinking-2025-05-14",
        "effort-2025-11-24",
      ]),
    );
    // Anthropic-only features Bedrock does not serve.
    for (const beta of ["files-api-2025-04-14", "code-execution-2025-08-25", "web-search-2025-03-05"]) {
      expect(BEDROCK_ANTHROPIC_BETAS).not.toContain(beta);
    }
    expect(VERTEX_ANTHROPIC_BETAS).toContain("web-search-2025-03-05");
  });
});
