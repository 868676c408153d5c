import { findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import { describe, expect, it } from "vitest";
import { catalogModelsAsDiscovered, toDiscoveredModels } from "./discovery";

describe("toDiscoveredModels", () => {
  it("prices known ids and aliases from the shipped table and zeroes unknown ones", () => {
    const sonnet = findCatalogModel("anthropic_api", "claude-sonnet-4");
    const models = toDiscoveredModels("anthropic_api", [
      { id: "claude-sonnet-4-20250514", label: "Claude Sonnet 4" },
      { id: "claude-future-9" },
    ]);
    expect(models).toEqual([
      {
        id: "claude-sonnet-4-20250514",
        label: "Claude Sonnet 4",
        pricing_known: true,
        input_per_1k: sonnet?.input_per_1k,
        output_per_1k: sonnet?.output_per_1k,
        cached_input_per_1k: sonnet?.cached_input_per_1k,
        cache_read_per_1k: sonnet?.cache_read_per_1k,
        cache_creation_per_1k: sonnet?.cache_creation_per_1k,
      },
      {
        id: "claude-future-9",
        label: "claude-future-9",
        pricing_known: false,
        input_per_1k: 0,
        output_per_1k: 0,
        cached_input_per_1k: 0,
        cache_read_per_1k: 0,
        cache_creation_per_1k: 0,
      },
    ]);
  });

  it("prices an Azure deployment by its model and keeps the deployment id", () => {
    const [model] = toDiscoveredModels("azure_api", [
      { id: "prod-4o", priceAs: "gpt-4o", label: "prod-4o (gpt-4o)" },
    ]);
    expect(model).toMatchObject({ id: "prod-4o", pricing_known: true });
    expect(model?.input_per_1k).toBe(findCatalogModel("azure_api", "gpt-4o")?.input_per_1k);
  });

  it("labels a known model with the catalog label and drops duplicates", () => {
    expect(toDiscoveredModels("openai_api", [{ id: "gpt-4o" }, { id: "gpt-4o" }])).toEqual([
      expect.objectContaining({ id: "gpt-4o", label: findCatalogModel("openai_api", "gpt-4o")?.label }),
    ]);
  });
});

describe("catalogModelsAsDiscovered", () => {
  it("lists every catalog model as priced", () => {
    const entry = findCatalogProvider("cloudflare_api");
    if (entry === undefined) throw new Error("no cloudflare entry");
    const models = catalogModelsAsDiscovered(entry);
    expect(models).toHaveLength(entry.models.length);
    expect(models.every((m) => m.pricing_known)).toBe(true);
    expect(models[0]).not.toHaveProperty("aliases");
  });
});
