import type { CatalogProvider, Provider } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { filterModelChoices, modelChoices, unlistedModels } from "./model-choices";

// Only the fields the choices read: ids, names and model lists.
const catalog = [
  {
    id: "openai_api",
    models: [
      { id: "gpt-4o", label: "GPT-4o" },
      { id: "gpt-4o-mini", label: "GPT-4o mini" },
    ],
  },
  { id: "anthropic_api", models: [{ id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" }] },
] as unknown as CatalogProvider[];

const providers = [
  { id: "p1", name: "OpenAI", provider_id: "openai_api", models: [] },
  {
    id: "p2",
    name: "Claude",
    provider_id: "anthropic_api",
    models: [{ id: "claude-sonnet-4-5" }, { id: "claude-x" }],
  },
] as unknown as Provider[];

describe("modelChoices", () => {
  it("offers a provider's own models, or the catalog's when its list is empty", () => {
    expect(modelChoices(providers, catalog)).toEqual([
      {
        providerId: "p1",
        providerName: "OpenAI",
        models: [
          { id: "gpt-4o", label: "GPT-4o" },
          { id: "gpt-4o-mini", label: "GPT-4o mini" },
        ],
      },
      {
        providerId: "p2",
        providerName: "Claude",
        models: [
          { id: "claude-sonnet-4-5", label: "Claude Sonnet 4.5" },
          { id: "claude-x", label: "claude-x" },
        ],
      },
    ]);
  });
});

describe("filterModelChoices", () => {
  const choices = modelChoices(providers, catalog);

  it("keeps models matching by id or label, ignoring case, and drops providers left empty", () => {
    const filtered = filterModelChoices(choices, "MINI");
    expect(filtered.map((group) => [group.providerName, group.models.map((m) => m.id)])).toEqual([
      ["OpenAI", ["gpt-4o-mini"]],
    ]);
    expect(filterModelChoices(choices, "sonnet 4.5")[0]?.models.map((m) => m.id)).toEqual([
      "claude-sonnet-4-5",
    ]);
  });

  it("keeps every model of a provider matching by name, and everything for a blank filter", () => {
    expect(filterModelChoices(choices, "claude")[0]?.models).toHaveLength(2);
    expect(filterModelChoices(choices, "  ")).toBe(choices);
    expect(filterModelChoices(choices, "llama")).toEqual([]);
  });
});

describe("unlistedModels", () => {
  it("returns the allowed ids no provider lists", () => {
    expect(unlistedModels(["gpt-4o", "my-fine-tune", "claude-x"], modelChoices(providers, catalog))).toEqual([
      "my-fine-tune",
    ]);
  });
});
