import { describe, expect, it } from "vitest";
import {
  AccessLogEntry,
  AccessLogPage,
  AccessLogQuery,
  AccessLogSession,
  AccessLogSessionPage,
  AccessLogSessionQuery,
} from "./access-logs";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const usage = {
  input_tokens: 100,
  output_tokens: 20,
  total_tokens: 120,
  cached_input_tokens: 10,
  cache_creation_tokens: 0,
  cost_usd: 0.0003,
  input_cost_usd: 0.0002,
  cached_input_cost_usd: 0.00001,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0.00009,
  cache_cost_usd: 0.00001,
};

const makeEntry = (overrides: Partial<AccessLogEntry> = {}): AccessLogEntry => ({
  id: "req-1",
  service_id: "svc-agent-network",
  timestamp: "2025-01-01T10:00:00Z",
  status_code: 200,
  duration_ms: 850,
  user_id: "usr-1",
  source_ip: "10.0.0.5",
  method: "POST",
  host: "api.openai.com",
  path: "/v1/chat/completions",
  provider: "openai_api",
  model: "gpt-4o-mini",
  session_id: "sess-1",
  resolved_provider_id: "prov-1",
  selected_policy_id: "pol-1",
  decision: "allow",
  deny_reason: "",
  ...usage,
  stream: false,
  group_ids: ["grp-eng"],
  ...overrides,
});

const makeSession = (overrides: Partial<AccessLogSession> = {}): AccessLogSession => ({
  session_id: "sess-1",
  user_id: "usr-1",
  group_ids: ["grp-eng"],
  started_at: "2025-01-01T10:00:00Z",
  ended_at: "2025-01-01T10:05:00Z",
  request_count: 1,
  ...usage,
  providers: ["openai_api"],
  models: ["gpt-4o-mini"],
  decision: "allow",
  entries: [makeEntry()],
  ...overrides,
});

describe("AccessLogEntry", () => {
  it("parses an entry without prompts", () => {
    expect(AccessLogEntry.parse(makeEntry())).toEqual(makeEntry());
  });

  it("parses an entry with captured prompts", () => {
    const entry = makeEntry({ request_prompt: "hi", response_completion: "hello" });
    expect(AccessLogEntry.parse(entry)).toEqual(entry);
  });

  it("parses a denied entry with log collection off (empty ip, host, path)", () => {
    const entry = makeEntry({
      source_ip: "",
      host: "",
      path: "",
      decision: "deny",
      deny_reason: "llm_policy.token_cap_exceeded",
    });
    expect(AccessLogEntry.safeParse(entry).success).toBe(true);
  });

  it.each(["input_tokens", "total_tokens", "cache_creation_tokens", "status_code", "duration_ms"] as const)(
    "rejects a fractional %s",
    (field) => {
      expect(issuePaths(AccessLogEntry.safeParse(makeEntry({ [field]: 1.5 })))).toEqual([field]);
    },
  );

  it("rejects a negative cost", () => {
    expect(issuePaths(AccessLogEntry.safeParse(makeEntry({ cache_cost_usd: -1 })))).toEqual([
      "cache_cost_usd",
    ]);
  });

  it("requires every non-prompt field", () => {
    const { stream: _s, deny_reason: _d, group_ids: _g, ...rest } = makeEntry();
    expect(issuePaths(AccessLogEntry.safeParse(rest))).toEqual(["deny_reason", "stream", "group_ids"]);
  });
});

describe("AccessLogSession", () => {
  it("parses a session with its entries", () => {
    expect(AccessLogSession.parse(makeSession())).toEqual(makeSession());
  });

  it("validates nested entries", () => {
    const session = makeSession({ entries: [makeEntry({ timestamp: "yesterday" })] });
    expect(issuePaths(AccessLogSession.safeParse(session))).toEqual(["entries.0.timestamp"]);
  });

  it("rejects a fractional request_count", () => {
    expect(issuePaths(AccessLogSession.safeParse(makeSession({ request_count: 0.5 })))).toEqual([
      "request_count",
    ]);
  });
});

describe("pages", () => {
  it("parses a page of entries and a page of sessions", () => {
    const meta = { page: 1, page_size: 50, total_records: 1, total_pages: 1 };
    expect(AccessLogPage.parse({ data: [makeEntry()], ...meta }).data).toHaveLength(1);
    expect(AccessLogSessionPage.parse({ data: [makeSession()], ...meta }).data).toHaveLength(1);
  });

  it("rejects page 0", () => {
    const result = AccessLogPage.safeParse({
      data: [],
      page: 0,
      page_size: 50,
      total_records: 0,
      total_pages: 0,
    });
    expect(issuePaths(result)).toEqual(["page"]);
  });
});

describe.each([
  ["AccessLogQuery", AccessLogQuery],
  ["AccessLogSessionQuery", AccessLogSessionQuery],
] as const)("%s", (_name, Query) => {
  it("applies the defaults to an empty query", () => {
    expect(Query.parse({})).toEqual({
      page: 1,
      page_size: 50,
      sort_by: "timestamp",
      sort_order: "descending",
    });
  });

  it("coerces page and page_size from text", () => {
    expect(Query.parse({ page: "3", page_size: "100" })).toMatchObject({ page: 3, page_size: 100 });
  });

  it.each([
    ["page", "0"],
    ["page", "1.5"],
    ["page", "abc"],
    ["page_size", "0"],
    ["page_size", "101"],
  ])("rejects %s=%s", (field, value) => {
    expect(issuePaths(Query.safeParse({ [field]: value }))).toEqual([field]);
  });

  it.each([
    ["ascending", "ascending"],
    ["asc", "ascending"],
    ["DESC", "descending"],
    ["descending", "descending"],
  ])("normalises sort_order=%s", (given, expected) => {
    expect(Query.parse({ sort_order: given }).sort_order).toBe(expected);
  });

  it("rejects an unknown sort_order", () => {
    expect(issuePaths(Query.safeParse({ sort_order: "up" }))).toEqual(["sort_order"]);
  });

  it("accepts a shared sort field and rejects unknown ones", () => {
    expect(issuePaths(Query.safeParse({ sort_by: "nope" }))).toEqual(["sort_by"]);
    expect(Query.safeParse({ sort_by: "cost_usd" }).success).toBe(true);
  });

  it("turns repeatable filters into lists", () => {
    const query = Query.parse({ group_id: "grp-1", provider_id: ["p1", "p2"], model: "gpt-4o" });
    expect(query).toMatchObject({ group_id: ["grp-1"], provider_id: ["p1", "p2"], model: ["gpt-4o"] });
  });

  it("keeps the text filters and drops empty ones", () => {
    const query = Query.parse({
      search: "alice",
      user_id: "",
      session_id: "s1",
      decision: "deny",
      path: "/v1/",
    });
    expect(query).toMatchObject({ search: "alice", session_id: "s1", decision: "deny", path: "/v1/" });
    expect(query.user_id).toBeUndefined();
  });

  it("accepts RFC 3339 dates, repairing a `+` offset decoded as a space", () => {
    const query = Query.parse({ start_date: "2025-01-01T00:00:00Z", end_date: "2025-01-02T00:00:00 02:00" });
    expect(query.end_date).toBe("2025-01-02T00:00:00+02:00");
  });

  it("treats empty dates as not given", () => {
    const query = Query.parse({ start_date: "", end_date: " " });
    expect(query.start_date).toBeUndefined();
    expect(query.end_date).toBeUndefined();
  });

  it.each(["start_date", "end_date"])("rejects a %s that is not RFC 3339", (field) => {
    expect(issuePaths(Query.safeParse({ [field]: "2025-01-01" }))).toEqual([field]);
  });

  it("rejects an end_date before the start_date", () => {
    const result = Query.safeParse({ start_date: "2025-01-02T00:00:00Z", end_date: "2025-01-01T00:00:00Z" });
    expect(issuePaths(result)).toEqual(["end_date"]);
  });
});

describe("sort fields", () => {
  it("orders entries by entry fields only", () => {
    expect(AccessLogQuery.safeParse({ sort_by: "duration_ms" }).success).toBe(true);
    expect(issuePaths(AccessLogQuery.safeParse({ sort_by: "started_at" }))).toEqual(["sort_by"]);
    expect(issuePaths(AccessLogQuery.safeParse({ sort_by: "request_prompt" }))).toEqual(["sort_by"]);
  });

  it("orders sessions by session fields only", () => {
    for (const field of ["timestamp", "started_at", "request_count", "total_tokens", "cost_usd"]) {
      expect(AccessLogSessionQuery.safeParse({ sort_by: field }).success).toBe(true);
    }
    expect(issuePaths(AccessLogSessionQuery.safeParse({ sort_by: "duration_ms" }))).toEqual(["sort_by"]);
  });
});
