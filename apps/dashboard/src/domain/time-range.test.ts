import type { UsageBucket } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import {
  bucketStart,
  checkCustomRange,
  customParams,
  granularityFor,
  placeOnTimeAxis,
  presetParams,
  rangeFromParams,
} from "./time-range";

const NOW = new Date("2026-03-12T10:37:21.000Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const bucket = (period_start: string, total_tokens: number): UsageBucket => ({
  period_start,
  input_tokens: total_tokens,
  output_tokens: 0,
  total_tokens,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  cost_usd: 0,
  input_cost_usd: 0,
  cached_input_cost_usd: 0,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0,
  cache_cost_usd: 0,
});

describe("granularityFor", () => {
  it("picks minutes for an hour, hours for a day or a week, days for a month", () => {
    expect(granularityFor(HOUR)).toBe("minute");
    expect(granularityFor(DAY)).toBe("hour");
    expect(granularityFor(7 * DAY)).toBe("hour");
    expect(granularityFor(30 * DAY)).toBe("day");
    expect(granularityFor(365 * DAY)).toBe("week");
    expect(granularityFor(5 * 365 * DAY)).toBe("month");
  });
});

describe("bucketStart", () => {
  it("cuts buckets in UTC, weeks from Monday and months from the 1st, as the API does", () => {
    const at = Date.parse("2026-03-12T10:37:21.500Z"); // a Thursday
    expect(new Date(bucketStart(at, "minute")).toISOString()).toBe("2026-03-12T10:37:00.000Z");
    expect(new Date(bucketStart(at, "hour")).toISOString()).toBe("2026-03-12T10:00:00.000Z");
    expect(new Date(bucketStart(at, "day")).toISOString()).toBe("2026-03-12T00:00:00.000Z");
    expect(new Date(bucketStart(at, "week")).toISOString()).toBe("2026-03-09T00:00:00.000Z");
    expect(new Date(bucketStart(at, "month")).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    const sunday = Date.parse("2026-03-15T23:00:00Z");
    expect(new Date(bucketStart(sunday, "week")).toISOString()).toBe("2026-03-09T00:00:00.000Z");
  });
});

describe("rangeFromParams", () => {
  it("opens on the last 7 days in hours, starting on a whole hour", () => {
    const range = rangeFromParams(new URLSearchParams(), NOW);
    expect(range.preset).toBe("7d");
    expect(range.granularity).toBe("hour");
    expect(range.start.toISOString()).toBe("2026-03-05T10:00:00.000Z");
    expect(range.end).toEqual(NOW);
  });

  it("reads a preset from the URL", () => {
    const range = rangeFromParams(presetParams("1h"), NOW);
    expect(range).toMatchObject({ preset: "1h", granularity: "minute" });
    expect(range.start.toISOString()).toBe("2026-03-12T09:37:00.000Z");
    expect(rangeFromParams(presetParams("30d"), NOW).granularity).toBe("day");
  });

  it("reads a custom range and sizes its buckets by its length", () => {
    const range = rangeFromParams(customParams("2026-01-01T00:00:00.000Z", "2026-01-03T00:00:00.000Z"), NOW);
    expect(range).toMatchObject({ preset: "custom", granularity: "hour" });
    expect(range.start.toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(range.end.toISOString()).toBe("2026-01-03T00:00:00.000Z");
  });

  it("falls back to the default for a backwards or malformed custom range and an unknown preset", () => {
    expect(rangeFromParams(customParams("2026-01-03T00:00:00Z", "2026-01-01T00:00:00Z"), NOW).preset).toBe(
      "7d",
    );
    expect(rangeFromParams(customParams("yesterday", "2026-01-01T00:00:00Z"), NOW).preset).toBe("7d");
    expect(rangeFromParams(new URLSearchParams({ range: "2y" }), NOW).preset).toBe("7d");
  });
});

describe("checkCustomRange", () => {
  it("asks for both bounds and an end after the start", () => {
    expect(checkCustomRange("", "")).toEqual({
      start: "Enter when the range starts.",
      end: "Enter when the range ends.",
    });
    expect(checkCustomRange("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z")).toEqual({
      end: "The end must be after the start.",
    });
    expect(checkCustomRange("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")).toEqual({});
  });
});

describe("placeOnTimeAxis", () => {
  it("puts every bucket of the range on the axis, with null where the API answered none", () => {
    const range = rangeFromParams(customParams("2026-03-12T06:30:00.000Z", "2026-03-12T10:15:00.000Z"), NOW);
    expect(range.granularity).toBe("hour");
    const placed = placeOnTimeAxis(range, [
      bucket("2026-03-12T07:00:00.000Z", 5),
      bucket("2026-03-12T10:00:00.000Z", 8),
    ]);
    expect(placed.times.map((t) => new Date(t).toISOString())).toEqual([
      "2026-03-12T06:00:00.000Z",
      "2026-03-12T07:00:00.000Z",
      "2026-03-12T08:00:00.000Z",
      "2026-03-12T09:00:00.000Z",
      "2026-03-12T10:00:00.000Z",
    ]);
    expect(placed.buckets.map((b) => b?.total_tokens ?? null)).toEqual([null, 5, null, null, 8]);
    expect(placed.domain.map((t) => new Date(t).toISOString())).toEqual([
      "2026-03-12T06:00:00.000Z",
      "2026-03-12T11:00:00.000Z",
    ]);
  });

  it("keeps a bucket the API answered off the expected grid rather than dropping its usage", () => {
    const range = rangeFromParams(presetParams("24h"), NOW);
    const placed = placeOnTimeAxis(range, [bucket("2026-03-12T09:30:00.000Z", 3)]);
    expect(placed.buckets.filter((b) => b !== null)).toHaveLength(1);
    expect(placed.times).toContain(Date.parse("2026-03-12T09:30:00.000Z"));
  });
});
