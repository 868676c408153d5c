import type { CatalogProvider } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { betasText, catalogBetasHint, parseBetas, servesClaudeBetas } from "./anthropic-betas";

const entry = (overrides: Partial<CatalogProvider>) =>
  ({ id: "openai_api", ...overrides }) as CatalogProvider;

describe("the provider form's Claude betas field", () => {
  it("is shown for Anthropic and for entries that list the betas they take", () => {
    expect(servesClaudeBetas(entry({ id: "anthropic_api" }))).toBe(true);
    expect(servesClaudeBetas(entry({ id: "vertex_api", anthropic_betas: ["context-1m-2025-08-07"] }))).toBe(
      true,
    );
    expect(servesClaudeBetas(entry({ id: "openai_api" }))).toBe(false);
  });

  it("says which list applies when it is left empty", () => {
    expect(catalogBetasHint(entry({ anthropic_betas: ["a-1", "b-2"] }))).toBe(
      "Empty uses the catalog's list: a-1, b-2.",
    );
    expect(catalogBetasHint(entry({ id: "anthropic_api" }))).toMatch(/every beta/);
  });

  it("reads values split by commas, spaces or lines, each once; empty is null", () => {
    expect(parseBetas(" a-1,b-2\nc-3  a-1 ")).toEqual({ betas: ["a-1", "b-2", "c-3"] });
    expect(parseBetas(" \n ")).toEqual({ betas: null });
    expect(betasText(["a-1", "b-2"])).toBe("a-1, b-2");
    expect(betasText(undefined)).toBe("");
  });

  it("names a value the API would refuse", () => {
    expect(parseBetas("a-1, Context-1M")).toEqual({
      error: "Context-1M: must be 1 to 64 of a-z, 0-9, - and _",
    });
  });
});
