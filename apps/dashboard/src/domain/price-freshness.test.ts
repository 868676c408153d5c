import type { CatalogModel } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { priceFreshness, STALE_AFTER_DAYS } from "./price-freshness";

const model: CatalogModel = {
  id: "m",
  label: "M",
  input_per_1k: 0.001,
  output_per_1k: 0.002,
  cached_input_per_1k: 0,
  cache_read_per_1k: 0,
  cache_creation_per_1k: 0,
  context_window: 128_000,
};
const entry = (prices_checked_on?: string, models = [model]) => ({
  models,
  prices_checked_on,
  prices_source: "https://vendor.example/pricing",
});

describe("priceFreshness", () => {
  it("is fresh up to 60 days after the check and stale from the 61st day", () => {
    expect(STALE_AFTER_DAYS).toBe(60);
    const day60 = priceFreshness(entry("2026-09-27"), new Date("2026-11-26T23:59:00Z"));
    expect(day60).toEqual({
      checkedOn: "2026-09-27",
      source: "https://vendor.example/pricing",
      ageDays: 60,
      stale: false,
    });
    expect(priceFreshness(entry("2026-09-26"), new Date("2026-11-26T00:00:00Z"))).toMatchObject({
      ageDays: 61,
      stale: true,
    });
  });

  it("counts calendar days in UTC, and a check dated after now as 0 days old", () => {
    expect(priceFreshness(entry("2026-11-26"), new Date("2026-11-26T00:00:01Z"))?.ageDays).toBe(0);
    expect(priceFreshness(entry("2026-11-27"), new Date("2026-11-26T12:00:00Z"))?.ageDays).toBe(0);
  });

  it("says nothing for an entry that ships no prices or names no valid check date", () => {
    const now = new Date("2026-11-26T00:00:00Z");
    expect(priceFreshness(entry("2026-11-01", []), now)).toBeUndefined();
    expect(priceFreshness(entry(undefined), now)).toBeUndefined();
    expect(priceFreshness(entry("26/11/2026"), now)).toBeUndefined();
  });
});
