import { API_KEY_TOKEN, CatalogProvider } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { CATALOG, catalogPublicView, findCatalogModel, findCatalogProvider } from "./catalog";
import type { CatalogEntryModel, PricingSurface } from "./types";

const RATE_SURFACE: [keyof CatalogEntryModel, PricingSurface][] = [
  ["input_per_1k", "input"],
  ["output_per_1k", "output"],
  ["cached_input_per_1k", "cached_input"],
  ["cache_read_per_1k", "cache_read"],
  ["cache_creation_per_1k", "cache_creation"],
];

describe("CATALOG", () => {
  it("holds the seven API styles (Google's two ways in) plus custom, with their flavors", () => {
    expect(CATALOG.map((e) => [e.id, e.api_flavor])).toEqual([
      ["openai_api", "openai"],
      ["anthropic_api", "anthropic"],
      ["azure_api", "azure_openai"],
      ["cloudflare_api", "cloud_gateway"],
      ["vertex_api", "vertex"],
      ["bedrock_api", "bedrock"],
      ["gemini_api", "gemini"],
      ["mistral_api", "mistral"],
      ["custom", "openai"],
    ]);
  });

  it.each(CATALOG.map((e) => [e.id, e] as const))("%s has well-formed provider fields", (_id, entry) => {
    expect(entry.auth_header_template).toContain(API_KEY_TOKEN);
    expect(entry.auth_header_name).toMatch(/^[A-Za-z][A-Za-z0-9-]*$/);
    expect(entry.brand_color).toMatch(/^#[0-9a-f]{6}$/);
    expect(entry.default_content_type).toBe("application/json");
    expect(entry.kind).toBe("llm");
    expect(entry.name.length).toBeGreaterThan(0);
    expect(entry.description.length).toBeGreaterThan(0);
    expect(entry.pricing_surfaces).toEqual(expect.arrayContaining(["input", "output"]));
    expect(entry.identity_injection.header_pair ?? entry.identity_injection.json_metadata).toBeDefined();
    for (const header of entry.extra_headers) {
      expect(header.name).toMatch(/^[A-Za-z][A-Za-z0-9-]*$/);
      // A required header must work before the operator sets a value.
      if (header.required) expect(header.default_value).toBeTruthy();
    }
    if (entry.listing !== null) expect(entry.listing.path.startsWith("/")).toBe(true);
  });

  it.each(CATALOG.map((e) => [e.id, e] as const))("%s prices its models sanely", (_id, entry) => {
    const ids = new Set<string>();
    for (const m of entry.models) {
      for (const id of [m.id, ...(m.aliases ?? [])]) {
        expect(ids.has(id), `${id} appears twice`).toBe(false);
        ids.add(id);
      }
      expect(m.label.length).toBeGreaterThan(0);
      expect(Number.isInteger(m.context_window) && m.context_window > 0).toBe(true);
      expect(m.input_per_1k).toBeGreaterThan(0);
      expect(m.output_per_1k).toBeGreaterThan(0);
      for (const [field, surface] of RATE_SURFACE) {
        const rate = m[field];
        if (typeof rate !== "number") throw new Error(`${field} is not a number`);
        expect(rate).toBeGreaterThanOrEqual(0);
        // Clean decimals, not float noise such as 0.00007500000000000001.
        expect(Number(rate.toPrecision(10))).toBe(rate);
        // A rate the vendor's shape does not bill stays 0 (billing reads 0 as the input rate).
        if (rate > 0) expect(entry.pricing_surfaces).toContain(surface);
      }
      // A cache discount is a discount.
      expect(m.cached_input_per_1k).toBeLessThan(m.input_per_1k);
      expect(m.cache_read_per_1k).toBeLessThan(m.input_per_1k);
      const tier = m.long_context;
      if (tier) {
        // A tier the model can reach, priced above the base, in clean decimals the shape bills.
        expect(tier.above_input_tokens, m.id).toBeGreaterThan(0);
        expect(tier.above_input_tokens, m.id).toBeLessThanOrEqual(m.context_window);
        expect(tier.input_per_1k, m.id).toBeGreaterThan(m.input_per_1k);
        expect(tier.output_per_1k, m.id).toBeGreaterThanOrEqual(m.output_per_1k);
        for (const [field, surface] of RATE_SURFACE) {
          const rate = tier[field as keyof typeof tier] ?? 0;
          expect(Number(rate.toPrecision(10))).toBe(rate);
          if (rate > 0) expect(entry.pricing_surfaces).toContain(surface);
        }
      }
    }
  });

  it("names for every entry that ships prices the vendor page they come from, and the day they were checked", () => {
    for (const entry of CATALOG) {
      expect(entry.prices_checked_on, entry.id).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if (entry.models.length === 0) continue;
      expect(entry.prices_source, entry.id).toMatch(/^https:\/\/[a-z0-9.-]+\.[a-z]+\//);
    }
    expect(findCatalogProvider("custom")?.prices_source).toBeNull();
  });

  it("lists no model id or alias twice in an entry, nor an alias that is another model's id", () => {
    for (const entry of CATALOG) {
      const names = entry.models.flatMap((m) => [m.id, ...(m.aliases ?? [])]);
      expect(
        names.filter((name, index) => names.indexOf(name) !== index),
        entry.id,
      ).toEqual([]);
    }
  });

  it("has a listing for every vendor but custom, and a control-plane host only for Cloudflare", () => {
    expect(CATALOG.filter((e) => e.listing === null).map((e) => e.id)).toEqual(["custom"]);
    expect(CATALOG.filter((e) => e.listing?.host !== undefined).map((e) => [e.id, e.listing?.host])).toEqual([
      ["cloudflare_api", "api.cloudflare.com"],
    ]);
  });

  it("uses the spec's literal substitution token and the vendors' auth headers", () => {
    expect(API_KEY_TOKEN).toBe(["$", "{API_KEY}"].join(""));
    expect(
      CATALOG.map((e) => [e.id, e.auth_header_name, e.auth_header_template.replace(API_KEY_TOKEN, "KEY")]),
    ).toEqual([
      ["openai_api", "Authorization", "Bearer KEY"],
      ["anthropic_api", "x-api-key", "KEY"],
      ["azure_api", "api-key", "KEY"],
      ["cloudflare_api", "Authorization", "Bearer KEY"],
      ["vertex_api", "Authorization", "Bearer KEY"],
      ["bedrock_api", "Authorization", "Bearer KEY"],
      ["gemini_api", "x-goog-api-key", "KEY"],
      ["mistral_api", "Authorization", "Bearer KEY"],
      ["custom", "Authorization", "Bearer KEY"],
    ]);
  });

  it("ships no models for custom", () => {
    expect(findCatalogProvider("custom")?.models).toEqual([]);
  });

  it("carries the vendors' list prices (USD per 1000 tokens)", () => {
    expect(findCatalogModel("openai_api", "gpt-4o")).toMatchObject({
      input_per_1k: 0.0025,
      cached_input_per_1k: 0.00125,
      output_per_1k: 0.01,
      cache_read_per_1k: 0,
      cache_creation_per_1k: 0,
      context_window: 128_000,
    });
    expect(findCatalogModel("openai_api", "gpt-4o-mini")).toMatchObject({
      input_per_1k: 0.00015,
      cached_input_per_1k: 0.000075,
      output_per_1k: 0.0006,
    });
    expect(findCatalogModel("anthropic_api", "claude-sonnet-4-5")).toMatchObject({
      input_per_1k: 0.003,
      output_per_1k: 0.015,
      cache_read_per_1k: 0.0003,
      cache_creation_per_1k: 0.00375,
      cached_input_per_1k: 0,
      context_window: 200_000,
    });
    expect(findCatalogModel("vertex_api", "gemini-2.5-pro")).toMatchObject({
      input_per_1k: 0.00125,
      output_per_1k: 0.01,
    });
    expect(findCatalogModel("mistral_api", "codestral-latest")).toMatchObject({
      input_per_1k: 0.0003,
      output_per_1k: 0.0009,
    });
    expect(findCatalogModel("azure_api", "o4-mini")).toEqual(findCatalogModel("openai_api", "o4-mini"));
  });

  it("lists Claude on Vertex by Vertex's @-versioned ids, at Anthropic's prices and long-context tier", () => {
    const pairs: [string, string][] = [
      ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
      ["claude-opus-4-5@20251101", "claude-opus-4-5"],
      ["claude-haiku-4-5@20251001", "claude-haiku-4-5"],
      ["claude-opus-4-1@20250805", "claude-opus-4-1"],
      ["claude-sonnet-4@20250514", "claude-sonnet-4"],
      ["claude-opus-4-6", "claude-opus-4-6"],
    ];
    for (const [vertexId, anthropicId] of pairs) {
      const onVertex = findCatalogModel("vertex_api", vertexId);
      const { aliases: _a, ...anthropic } = findCatalogModel("anthropic_api", anthropicId) ?? { id: "" };
      expect({ ...onVertex, id: anthropicId, aliases: undefined }, vertexId).toEqual({
        ...anthropic,
        aliases: undefined,
      });
      expect(findCatalogModel("vertex_api", anthropicId)?.id).toBe(vertexId);
    }
    expect(findCatalogModel("vertex_api", "claude-sonnet-4-5@20250929")?.long_context).toEqual({
      above_input_tokens: 200_000,
      input_per_1k: 0.006,
      output_per_1k: 0.0225,
      cached_input_per_1k: 0,
      cache_read_per_1k: 0.0006,
      cache_creation_per_1k: 0.0075,
    });
  });

  it("lists the current Gemini models on both of Google's ways in, with the Pro models' 200k tier", () => {
    for (const id of [
      "gemini-3.1-pro-preview",
      "gemini-3-pro-preview",
      "gemini-3-flash-preview",
      "gemini-2.5-pro",
      "gemini-2.5-flash",
      "gemini-2.5-flash-lite",
    ]) {
      expect(findCatalogModel("gemini_api", id), id).toEqual(findCatalogModel("vertex_api", id));
    }
    expect(findCatalogModel("gemini_api", "gemini-3-pro-preview")).toMatchObject({
      input_per_1k: 0.002,
      output_per_1k: 0.012,
      cached_input_per_1k: 0.0002,
      long_context: { above_input_tokens: 200_000, input_per_1k: 0.004, output_per_1k: 0.018 },
    });
    expect(findCatalogModel("vertex_api", "gemini-2.5-pro")?.long_context).toMatchObject({
      input_per_1k: 0.0025,
      output_per_1k: 0.015,
      cached_input_per_1k: 0.00025,
    });
    expect(findCatalogModel("gemini_api", "gemini-2.5-flash")?.long_context).toBeUndefined();
    // Gemini 2.0 Flash lists lower on the Gemini API than on Vertex.
    expect(findCatalogModel("gemini_api", "gemini-2.0-flash")?.input_per_1k).toBe(0.0001);
    expect(findCatalogModel("vertex_api", "gemini-2.0-flash")?.input_per_1k).toBe(0.00015);
  });

  it("lists OpenAI's GPT-5 models, the 1.05M-window ones with their 272k tier", () => {
    for (const id of [
      "gpt-5",
      "gpt-5-mini",
      "gpt-5-nano",
      "gpt-5.1",
      "gpt-5.1-codex",
      "gpt-5.2",
      "gpt-5.4",
    ]) {
      expect(findCatalogModel("openai_api", id), id).toBeDefined();
    }
    expect(findCatalogModel("openai_api", "gpt-5.4")?.long_context).toEqual({
      above_input_tokens: 272_000,
      input_per_1k: 0.005,
      output_per_1k: 0.0225,
      cached_input_per_1k: 0.0005,
      cache_read_per_1k: 0,
      cache_creation_per_1k: 0,
    });
    expect(findCatalogModel("openai_api", "gpt-5.1")?.long_context).toBeUndefined();
  });

  it("cannot be edited in place", () => {
    const model = findCatalogModel("openai_api", "gpt-4o");
    expect(() => {
      if (model) model.input_per_1k = 0;
    }).toThrow(TypeError);
    expect(Object.isFrozen(CATALOG)).toBe(true);
  });
});

describe("findCatalogProvider", () => {
  it("finds an entry by id and nothing for an unknown id", () => {
    expect(findCatalogProvider("anthropic_api")?.auth_header_name).toBe("x-api-key");
    expect(findCatalogProvider("azure_api")?.auth_header_name).toBe("api-key");
    expect(findCatalogProvider("bedrock_api")?.name).toBe("Amazon Bedrock");
    expect(findCatalogProvider("sagemaker_api")).toBeUndefined();
  });
});

describe("findCatalogModel", () => {
  it("finds a model by id or by a dated alias the vendor lists", () => {
    expect(findCatalogModel("anthropic_api", "claude-sonnet-4-20250514")?.id).toBe("claude-sonnet-4");
    expect(findCatalogModel("anthropic_api", "claude-3-5-haiku-latest")?.id).toBe("claude-3-5-haiku");
    expect(findCatalogModel("openai_api", "gpt-4o-2024-11-20")?.id).toBe("gpt-4o");
    expect(findCatalogModel("mistral_api", "mistral-large-2512")?.id).toBe("mistral-large-latest");
  });

  it("does not price a snapshot that lists at a different price", () => {
    expect(findCatalogModel("openai_api", "gpt-4o-2024-05-13")).toBeUndefined();
  });

  it("is scoped to the catalog provider", () => {
    expect(findCatalogModel("anthropic_api", "gpt-4o")).toBeUndefined();
    expect(findCatalogModel("nope", "gpt-4o")).toBeUndefined();
    expect(findCatalogModel("custom", "gpt-4o")).toBeUndefined();
  });

  it("names gateway models <provider>/<model> and bills Anthropic cache reads as cached input", () => {
    const sonnet = findCatalogModel("cloudflare_api", "anthropic/claude-sonnet-4-5");
    expect(sonnet?.cache_read_per_1k).toBe(0.0003);
    expect(sonnet?.cached_input_per_1k).toBe(0.0003);
    expect(findCatalogModel("cloudflare_api", "openai/gpt-4o-mini-2024-07-18")?.id).toBe(
      "openai/gpt-4o-mini",
    );
  });
});

describe("catalogPublicView", () => {
  it("returns the spec's fields plus api_flavor, listing and auth_header_name, without aliases", () => {
    for (const entry of CATALOG) {
      const view = catalogPublicView(entry);
      expect(Object.keys(view).sort()).toEqual(
        [
          "api_flavor",
          "auth_header_name",
          "auth_header_template",
          "brand_color",
          "default_content_type",
          "default_host",
          "description",
          "extra_headers",
          "id",
          "identity_injection",
          "kind",
          "listing",
          "models",
          "name",
          "pricing_surfaces",
          "prices_checked_on",
          ...(entry.prices_source === null ? [] : ["prices_source"]),
          ...(entry.anthropic_betas ? ["anthropic_betas"] : []),
        ].sort(),
      );
      for (const m of view.models) expect(m).not.toHaveProperty("aliases");
      expect(view.models).toHaveLength(entry.models.length);
    }
  });

  it("returns a copy the caller may change", () => {
    const entry = findCatalogProvider("openai_api");
    if (!entry) throw new Error("openai_api missing");
    const view = catalogPublicView(entry);
    view.pricing_surfaces.push("cache_read");
    view.extra_headers.pop();
    if (view.listing) view.listing.path = "/elsewhere";
    expect(entry.pricing_surfaces).toEqual(["input", "output", "cached_input"]);
    expect(entry.extra_headers).toHaveLength(2);
    expect(entry.listing?.path).toBe("/v1/models");
  });
});

describe("the catalog against the API contract", () => {
  it.each(CATALOG.map((entry) => [entry.id, entry] as const))(
    "%s is a valid catalog provider",
    (_id, entry) => {
      const parsed = CatalogProvider.safeParse(catalogPublicView(entry));
      expect(parsed.error?.issues ?? []).toEqual([]);
    },
  );
});
