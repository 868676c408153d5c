import type { Granularity } from "@agentnet/contracts";
import { formatRange } from "./format";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The Overview's range presets: each ends now and starts this long before. */
export const RANGE_PRESETS = [
  { key: "1h", label: "1 h", words: "the last hour", ms: HOUR },
  { key: "24h", label: "24 h", words: "the last 24 hours", ms: DAY },
  { key: "7d", label: "7 d", words: "the last 7 days", ms: 7 * DAY },
  { key: "30d", label: "30 d", words: "the last 30 days", ms: 30 * DAY },
] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number]["key"];
/** The last 7 days, as the Overview opens. */
const DEFAULT_RANGE = RANGE_PRESETS[2];

export interface TimeRange {
  preset: RangePreset | "custom";
  start: Date;
  end: Date;
  granularity: Granularity;
}

/**
 * The bucket width for a range: the finest the API offers that keeps a chart under about 200
 * buckets (1 h → 60 minutes, 24 h → 24 hours, 7 d → 168 hours, 30 d → 30 days).
 */
export function granularityFor(spanMs: number): Granularity {
  if (spanMs <= 3 * HOUR) return "minute";
  if (spanMs <= 8 * DAY) return "hour";
  if (spanMs <= 180 * DAY) return "day";
  if (spanMs <= 3 * 365 * DAY) return "week";
  return "month";
}

/** The start of the bucket holding `ms`, as the API cuts them: in UTC, weeks from Monday, months from the 1st. */
export function bucketStart(ms: number, granularity: Granularity): number {
  const date = new Date(ms);
  switch (granularity) {
    case "minute":
      return Math.floor(ms / MINUTE) * MINUTE;
    case "hour":
      return Math.floor(ms / HOUR) * HOUR;
    case "day":
      return Math.floor(ms / DAY) * DAY;
    case "week": {
      const daysSinceMonday = (date.getUTCDay() + 6) % 7;
      return Math.floor(ms / DAY) * DAY - daysSinceMonday * DAY;
    }
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
}

const nextBucketStart = (start: number, granularity: Granularity): number => {
  if (granularity !== "month") {
    const width = { minute: MINUTE, hour: HOUR, day: DAY, week: 7 * DAY }[granularity];
    return start + width;
  }
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
};

/**
 * The range a URL asks for: `range=24h` (a preset, ending at `now`) or `range=custom` with
 * `start_date` and `end_date`. A preset starts on a bucket boundary so every bar is a whole
 * bucket; anything missing or malformed is the default preset.
 */
export function rangeFromParams(params: URLSearchParams, now: Date): TimeRange {
  if (params.get("range") === "custom") {
    const start = Date.parse(params.get("start_date") ?? "");
    const end = Date.parse(params.get("end_date") ?? "");
    if (start < end) {
      return {
        preset: "custom",
        start: new Date(start),
        end: new Date(end),
        granularity: granularityFor(end - start),
      };
    }
  }
  const preset = RANGE_PRESETS.find((p) => p.key === params.get("range")) ?? DEFAULT_RANGE;
  const granularity = granularityFor(preset.ms);
  return {
    preset: preset.key,
    start: new Date(bucketStart(now.getTime() - preset.ms, granularity)),
    end: now,
    granularity,
  };
}

/** The range as the API's reads take it (RFC 3339 bounds, both inclusive). */
export interface RangeBounds {
  start_date: string;
  end_date: string;
}

export const rangeBounds = (range: TimeRange): RangeBounds => ({
  start_date: range.start.toISOString(),
  end_date: range.end.toISOString(),
});

/** The URL query of a preset range. */
export const presetParams = (preset: RangePreset): URLSearchParams => new URLSearchParams({ range: preset });

/** The URL query of a custom range (RFC 3339 bounds). */
export const customParams = (startIso: string, endIso: string): URLSearchParams =>
  new URLSearchParams({ range: "custom", start_date: startIso, end_date: endIso });

/** Field errors of a custom range as typed (RFC 3339, blank when not given); empty when it is usable. */
export function checkCustomRange(startIso: string, endIso: string): { start?: string; end?: string } {
  const errors: { start?: string; end?: string } = {};
  if (startIso === "") errors.start = "Enter when the range starts.";
  if (endIso === "") errors.end = "Enter when the range ends.";
  if (startIso !== "" && endIso !== "" && Date.parse(endIso) <= Date.parse(startIso))
    errors.end = "The end must be after the start.";
  return errors;
}

/** What a range covers, in words: "the last 24 hours" or the custom bounds (in local time). */
export function describeRange(range: TimeRange): string {
  const preset = RANGE_PRESETS.find((p) => p.key === range.preset);
  if (preset) return preset.words;
  return formatRange(range.start, range.end);
}

/**
 * Every bucket of the range on a true time axis, with the API's bucket where it answered one and
 * null where it did not (no usage then): a gap stays a gap instead of neighbours closing up.
 */
export function placeOnTimeAxis<B extends { period_start: string }>(
  range: TimeRange,
  buckets: readonly B[],
): TimeAxis<B> {
  const byStart = new Map(buckets.map((b) => [Date.parse(b.period_start), b]));
  const times = new Set(byStart.keys());
  const first = bucketStart(range.start.getTime(), range.granularity);
  for (let t = first; t <= range.end.getTime(); t = nextBucketStart(t, range.granularity)) times.add(t);
  const sorted = [...times].sort((a, b) => a - b);
  const last = sorted[sorted.length - 1] ?? first;
  return {
    times: sorted,
    buckets: sorted.map((t) => byStart.get(t) ?? null),
    domain: [Math.min(first, sorted[0] ?? first), nextBucketStart(last, range.granularity)],
  };
}

export interface TimeAxis<B> {
  /** Bucket starts (ms), oldest first. */
  times: number[];
  buckets: (B | null)[];
  /** From the first bucket's start to the last one's end: the whole range stays on the axis. */
  domain: [number, number];
}
