import { describe, expect, it } from "vitest";
import {
  DEFAULT_FILTERS,
  filtersToParams,
  isoToLocalInput,
  liveTailFilters,
  localInputToIso,
  logEntryHash,
  logViewParams,
  parseFilters,
  parseLogView,
  splitList,
  toggleSort,
} from "./filters";

describe("log filters in the URL", () => {
  it("round-trips every filter, repeated lists included", () => {
    const filters = {
      ...DEFAULT_FILTERS,
      search: "alice",
      user_id: "u1",
      session_id: "s1",
      group_id: ["g1", "g2"],
      provider_id: ["p1"],
      model: ["gpt-4o", "claude"],
      decision: "deny",
      path: "/v1/",
      start_date: "2025-03-10T00:00:00.000Z",
      end_date: "2025-03-11T00:00:00.000Z",
      page: 3,
      page_size: 50,
      sort_by: "cost_usd",
      sort_order: "ascending" as const,
    };
    const params = filtersToParams(filters);
    expect(params.getAll("group_id")).toEqual(["g1", "g2"]);
    expect(parseFilters(new URLSearchParams(params.toString()))).toEqual(filters);
  });

  it("leaves defaults out of the URL", () => {
    expect(filtersToParams(DEFAULT_FILTERS).toString()).toBe("");
    expect(filtersToParams({ ...DEFAULT_FILTERS, decision: "allow" }).toString()).toBe("decision=allow");
  });

  it("falls back to defaults for malformed paging and caps the page size at 100", () => {
    const parsed = parseFilters(new URLSearchParams("page=-2&page_size=500&sort_order=sideways&model="));
    expect(parsed.page).toBe(1);
    expect(parsed.page_size).toBe(100);
    expect(parsed.sort_order).toBe("descending");
    expect(parsed.model).toEqual([]);
  });

  it("sorts a new column descending and flips the same column, back to page 1", () => {
    const byCost = toggleSort({ ...DEFAULT_FILTERS, page: 4 }, "cost_usd");
    expect(byCost).toMatchObject({ sort_by: "cost_usd", sort_order: "descending", page: 1 });
    expect(toggleSort(byCost, "cost_usd").sort_order).toBe("ascending");
  });

  it("splits comma lists and converts datetime-local values both ways", () => {
    expect(splitList(" a, b ,, c ")).toEqual(["a", "b", "c"]);
    const iso = localInputToIso("2025-03-10T12:30");
    expect(isoToLocalInput(iso)).toBe("2025-03-10T12:30");
    expect(localInputToIso("")).toBe("");
    expect(isoToLocalInput("not a date")).toBe("");
  });
});

describe("the access-log view in the URL", () => {
  it("keeps live tail and the open entry after the filters, and reads them back", () => {
    const params = logViewParams({ ...DEFAULT_FILTERS, model: ["gpt-4o"] }, { live: true, entry: "log 1" });
    expect(params.toString()).toBe("model=gpt-4o&live=1&entry=log+1");
    const parsed = new URLSearchParams(params.toString());
    expect(parseLogView(parsed)).toEqual({ live: true, entry: "log 1" });
    expect(parseFilters(parsed)).toEqual({ ...DEFAULT_FILTERS, model: ["gpt-4o"] });
  });

  it("leaves a closed drawer and live tail off out of the URL", () => {
    expect(logViewParams(DEFAULT_FILTERS, { live: false, entry: "" }).toString()).toBe("");
    expect(parseLogView(new URLSearchParams("live=yes&entry=%20"))).toEqual({ live: false, entry: "" });
  });

  it("links one entry on its own and tails from the first page, newest first", () => {
    expect(logEntryHash("a&b")).toBe("#/logs?entry=a%26b");
    const tail = liveTailFilters({
      ...DEFAULT_FILTERS,
      page: 3,
      sort_by: "cost_usd",
      sort_order: "ascending",
    });
    expect(tail).toMatchObject({ page: 1, sort_by: "timestamp", sort_order: "descending" });
  });
});
