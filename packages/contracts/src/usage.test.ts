import { describe, expect, it } from "vitest";
import { UsageBreakdownQuery, UsageBucket, UsageQuery, UsageSeriesBucket } from "./usage";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeBucket = (overrides: Record<string, unknown> = {}) => ({
  period_start: "2025-01-01T00:00:00Z",
  input_tokens: 100,
  output_tokens: 20,
  total_tokens: 120,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  input_cost_usd: 0.001,
  cached_input_cost_usd: 0,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0.002,
  cost_usd: 0.003,
  cache_cost_usd: 0,
  ...overrides,
});

describe("UsageBucket", () => {
  it("parses a bucket", () => {
    expect(UsageBucket.parse(makeBucket())).toEqual(makeBucket());
  });

  it("requires period_start as RFC 3339", () => {
    expect(issuePaths(UsageBucket.safeParse(makeBucket({ period_start: "2025-01-01" })))).toEqual([
      "period_start",
    ]);
  });

  it("rejects a fractional token count", () => {
    expect(issuePaths(UsageBucket.safeParse(makeBucket({ output_tokens: 2.5 })))).toEqual(["output_tokens"]);
  });
});

describe("UsageQuery", () => {
  it("defaults granularity to day", () => {
    expect(UsageQuery.parse({})).toEqual({ granularity: "day" });
  });

  it.each(["minute", "hour", "day", "week", "month"])("accepts granularity=%s", (granularity) => {
    expect(UsageQuery.parse({ granularity }).granularity).toBe(granularity);
  });

  it("rejects an unknown granularity", () => {
    expect(issuePaths(UsageQuery.safeParse({ granularity: "year" }))).toEqual(["granularity"]);
  });

  it("parses the filters", () => {
    const query = UsageQuery.parse({
      start_date: "2025-01-01T00:00:00Z",
      end_date: "2025-02-01T00:00:00+01:00",
      user_id: "usr-1",
      session_id: "sess-1",
      group_id: ["g1", "g2"],
      provider_id: "p1",
      model: "gpt-4o",
    });
    expect(query).toMatchObject({
      user_id: "usr-1",
      group_id: ["g1", "g2"],
      provider_id: ["p1"],
      model: ["gpt-4o"],
    });
  });

  it("rejects an end_date before the start_date", () => {
    const result = UsageQuery.safeParse({
      start_date: "2025-01-02T00:00:00Z",
      end_date: "2025-01-01T00:00:00Z",
    });
    expect(issuePaths(result)).toEqual(["end_date"]);
  });

  it("strips paging parameters it does not take", () => {
    expect(UsageQuery.parse({ page: "2" })).not.toHaveProperty("page");
  });
});

describe("UsageBreakdownQuery", () => {
  it.each(["user", "group", "model", "provider"])("accepts by=%s with the usage filters", (by) => {
    expect(UsageBreakdownQuery.parse({ by, model: "gpt-4o" })).toEqual({ by, model: ["gpt-4o"] });
  });

  it("requires by and refuses anything else", () => {
    expect(issuePaths(UsageBreakdownQuery.safeParse({}))).toEqual(["by"]);
    expect(issuePaths(UsageBreakdownQuery.safeParse({ by: "session" }))).toEqual(["by"]);
  });
});

describe("UsageSeriesBucket", () => {
  it("takes null latency for a bucket without allowed requests", () => {
    const bucket = {
      period_start: "2025-01-01T00:00:00Z",
      requests: 1,
      errors: 0,
      denied: 1,
      latency_p50_ms: null,
      latency_p95_ms: null,
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
    };
    expect(UsageSeriesBucket.parse(bucket)).toEqual(bucket);
  });
});
