import { describe, expect, it } from "vitest";
import { type RateCard, resolveRates } from "./rates";

const catalogOpenAi: RateCard = {
  input_per_1k: 0.0025,
  output_per_1k: 0.01,
  cached_input_per_1k: 0.00125,
  cache_read_per_1k: 0,
  cache_creation_per_1k: 0,
};

const catalogAnthropic: RateCard = {
  input_per_1k: 0.003,
  output_per_1k: 0.015,
  cached_input_per_1k: 0,
  cache_read_per_1k: 0.0003,
  cache_creation_per_1k: 0.00375,
};

describe("resolveRates", () => {
  it("uses the catalog model when the provider has no row for it", () => {
    expect(resolveRates(undefined, catalogAnthropic)).toEqual({
      input_per_1k: 0.003,
      output_per_1k: 0.015,
      cached_input_per_1k: 0.003,
      cache_read_per_1k: 0.0003,
      cache_creation_per_1k: 0.00375,
      pricing_known: true,
    });
  });

  it("lets an omitted cache rate inherit the catalog default", () => {
    const rates = resolveRates({ input_per_1k: 0.002, output_per_1k: 0.008 }, catalogOpenAi);
    expect(rates.input_per_1k).toBe(0.002);
    expect(rates.output_per_1k).toBe(0.008);
    expect(rates.cached_input_per_1k).toBe(0.00125);
  });

  it("lets a provider rate override the catalog default", () => {
    const rates = resolveRates(
      { input_per_1k: 0.003, output_per_1k: 0.015, cache_read_per_1k: 0.0001, cache_creation_per_1k: 0.005 },
      catalogAnthropic,
    );
    expect(rates.cache_read_per_1k).toBe(0.0001);
    expect(rates.cache_creation_per_1k).toBe(0.005);
  });

  it("bills a 0 cache rate at the provider's input rate (no discount)", () => {
    const rates = resolveRates(
      { input_per_1k: 0.004, output_per_1k: 0.01, cached_input_per_1k: 0, cache_read_per_1k: 0 },
      { ...catalogOpenAi, cache_read_per_1k: 0.0002 },
    );
    expect(rates.cached_input_per_1k).toBe(0.004);
    expect(rates.cache_read_per_1k).toBe(0.004);
  });

  it("bills an inherited catalog 0 at the provider's input rate, not the catalog's", () => {
    const rates = resolveRates({ input_per_1k: 0.004, output_per_1k: 0.01 }, catalogOpenAi);
    expect(rates.cache_creation_per_1k).toBe(0.004);
  });

  it("bills cache tokens at input when no catalog model exists", () => {
    expect(resolveRates({ input_per_1k: 0.001, output_per_1k: 0.002 }, undefined)).toEqual({
      input_per_1k: 0.001,
      output_per_1k: 0.002,
      cached_input_per_1k: 0.001,
      cache_read_per_1k: 0.001,
      cache_creation_per_1k: 0.001,
      pricing_known: true,
    });
  });

  it("prices an unknown model at zero and says so", () => {
    expect(resolveRates(undefined, undefined)).toEqual({
      input_per_1k: 0,
      output_per_1k: 0,
      cached_input_per_1k: 0,
      cache_read_per_1k: 0,
      cache_creation_per_1k: 0,
      pricing_known: false,
    });
  });
});
