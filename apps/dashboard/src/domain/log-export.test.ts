import type { AccessLogEntry, AccessLogPage } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { DEFAULT_FILTERS } from "./filters";
import {
  collectEntries,
  EXPORT_COLUMNS,
  EXPORT_ROW_CAP,
  exportFile,
  exportFileName,
  exportQuery,
  exportSummary,
} from "./log-export";

const makeEntry = (overrides: Partial<AccessLogEntry> = {}): AccessLogEntry => ({
  id: "log-1",
  service_id: "svc-1",
  timestamp: "2025-03-10T12:30:05.000Z",
  status_code: 200,
  duration_ms: 42,
  user_id: "u-1",
  source_ip: "10.0.0.1",
  method: "POST",
  host: "api.openai.com",
  path: "/v1/chat/completions",
  provider: "openai_api",
  model: "gpt-4o-mini",
  session_id: "release-notes",
  resolved_provider_id: "p-1",
  selected_policy_id: "pol-1",
  decision: "allow",
  deny_reason: "",
  input_tokens: 120,
  output_tokens: 30,
  total_tokens: 150,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  cost_usd: 0.000036,
  input_cost_usd: 0.000018,
  cached_input_cost_usd: 0,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0.000018,
  cache_cost_usd: 0,
  stream: false,
  group_ids: ["g-1", "g-2"],
  request_prompt: '[{"role":"user","content":"Hi, there"}]',
  response_completion: "Hello",
  ...overrides,
});

/** An API that holds `total` rows and answers pages of `pageSize`, counting its reads. */
function fakeLogs(total: number, pageSize = 100) {
  const reads: number[] = [];
  const readPage = async (page: number): Promise<AccessLogPage> => {
    reads.push(page);
    const from = (page - 1) * pageSize;
    const count = Math.max(0, Math.min(pageSize, total - from));
    return {
      data: Array.from({ length: count }, (_, i) => makeEntry({ id: `log-${from + i}` })),
      page,
      page_size: pageSize,
      total_records: total,
      total_pages: Math.ceil(total / pageSize),
    };
  };
  return { reads, readPage };
}

describe("exporting access logs", () => {
  it("reads every page of the filter and reports progress", async () => {
    const logs = fakeLogs(250);
    const progress: number[] = [];
    const result = await collectEntries(logs.readPage, (read) => progress.push(read));
    expect(logs.reads).toEqual([1, 2, 3]);
    expect(progress).toEqual([100, 200, 250]);
    expect(result).toMatchObject({ total: 250, capped: false });
    expect(result.entries.map((e) => e.id).at(-1)).toBe("log-249");
  });

  it("stops at the cap and says the export was cut", async () => {
    const logs = fakeLogs(EXPORT_ROW_CAP + 500);
    const result = await collectEntries(logs.readPage);
    expect(logs.reads).toHaveLength(EXPORT_ROW_CAP / 100);
    expect(result.entries).toHaveLength(EXPORT_ROW_CAP);
    expect(result).toMatchObject({ total: EXPORT_ROW_CAP + 500, capped: true });
    expect(exportSummary(result, "a.csv")).toBe(
      "Exported the first 10,000 of 10,500 requests to a.csv: an export stops at 10,000 rows. Narrow the filters (a shorter time range) to export the rest.",
    );
  });

  it("reads one page for an empty filter and counts a single row in words", async () => {
    const empty = fakeLogs(0);
    expect(await collectEntries(empty.readPage)).toEqual({ entries: [], total: 0, capped: false });
    expect(empty.reads).toEqual([1]);
    expect(exportSummary({ total: 1, capped: false }, "a.json")).toBe("Exported 1 request to a.json.");
  });

  it("keeps a row once when a page boundary shifts under the export", async () => {
    const pages: AccessLogPage[] = [
      {
        data: [makeEntry({ id: "a" }), makeEntry({ id: "b" })],
        page: 1,
        page_size: 2,
        total_records: 3,
        total_pages: 2,
      },
      {
        data: [makeEntry({ id: "b" }), makeEntry({ id: "c" })],
        page: 2,
        page_size: 2,
        total_records: 3,
        total_pages: 2,
      },
    ];
    const result = await collectEntries(async (page) => {
      const answer = pages[page - 1];
      if (!answer) throw new Error(`read past the last page: ${page}`);
      return answer;
    });
    expect(result.entries.map((e) => e.id)).toEqual(["a", "b", "c"]);
  });

  it("reads whole every entry the list carried as a preview, and exports no preview flag", async () => {
    const whole = "p".repeat(40_000);
    const page: AccessLogPage = {
      data: [makeEntry({ id: "cut" }), makeEntry({ id: "short" }), makeEntry({ id: "gone" })].map((entry) =>
        entry.id === "short"
          ? entry
          : { ...entry, request_prompt: whole.slice(0, 100), request_prompt_truncated: true },
      ),
      page: 1,
      page_size: 100,
      total_records: 3,
      total_pages: 1,
    };
    const wholeReads: string[] = [];
    const result = await collectEntries(
      async () => page,
      undefined,
      async (id) => {
        wholeReads.push(id);
        return id === "cut" ? makeEntry({ id, request_prompt: whole }) : undefined;
      },
    );
    expect(wholeReads.sort()).toEqual(["cut", "gone"]);
    expect(result.entries.map((e) => [e.id, e.request_prompt?.length])).toEqual([
      ["cut", 40_000],
      ["short", makeEntry().request_prompt?.length],
      ["gone", 100],
    ]);
    expect(result.entries.some((e) => "request_prompt_truncated" in e)).toBe(false);
  });

  it("queries with the view's filters, the largest pages and an end pinned to the start", () => {
    const started = new Date("2025-03-10T12:00:00.000Z");
    const query = exportQuery({ ...DEFAULT_FILTERS, model: ["gpt-4o"], page: 3 }, started);
    expect(query).toMatchObject({ model: ["gpt-4o"], page_size: 100, end_date: "2025-03-10T12:00:00.000Z" });
    const bounded = exportQuery({ ...DEFAULT_FILTERS, end_date: "2025-01-01T00:00:00.000Z" }, started);
    expect(bounded.end_date).toBe("2025-01-01T00:00:00.000Z");
  });

  it("writes every field of an entry as a CSV column, lists joined by spaces", () => {
    const entry = makeEntry();
    expect([...EXPORT_COLUMNS].sort()).toEqual(Object.keys(entry).sort());
    const { text, type } = exportFile("csv", [entry]);
    expect(type).toBe("text/csv;charset=utf-8");
    const [header, row] = text.split("\r\n");
    expect(header).toBe(EXPORT_COLUMNS.join(","));
    expect(row).toContain(",g-1 g-2,");
    expect(row).toContain(',"[{""role"":""user"",""content"":""Hi, there""}]",Hello');
  });

  it("writes JSON as the API's entries and names files by time", () => {
    const entry = makeEntry({ request_prompt: undefined });
    const { text, type } = exportFile("json", [entry]);
    expect(type).toBe("application/json");
    expect(JSON.parse(text)).toEqual([entry]);
    expect(exportFileName("csv", new Date("2025-03-10T12:30:05.123Z"))).toBe(
      "access-logs-2025-03-10T12-30-05Z.csv",
    );
  });
});
