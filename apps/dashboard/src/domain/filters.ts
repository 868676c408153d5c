import type { Query } from "../api/client";

/** Every filter of the access-log and session lists, plus sorting and paging. */
export interface LogFilters {
  search: string;
  user_id: string;
  session_id: string;
  group_id: string[];
  provider_id: string[];
  model: string[];
  decision: string;
  path: string;
  start_date: string;
  end_date: string;
  page: number;
  page_size: number;
  sort_by: string;
  sort_order: "ascending" | "descending";
}

export const PAGE_SIZES = [10, 25, 50, 100] as const;
export const MAX_PAGE_SIZE = 100;

export const DEFAULT_FILTERS: LogFilters = {
  search: "",
  user_id: "",
  session_id: "",
  group_id: [],
  provider_id: [],
  model: [],
  decision: "",
  path: "",
  start_date: "",
  end_date: "",
  page: 1,
  page_size: 25,
  sort_by: "timestamp",
  sort_order: "descending",
};

const TEXT_KEYS = ["search", "user_id", "session_id", "decision", "path", "start_date", "end_date"] as const;
const LIST_KEYS = ["group_id", "provider_id", "model"] as const;

const positiveInt = (text: string | null, fallback: number, max = Number.MAX_SAFE_INTEGER): number => {
  const n = Number(text);
  return text !== null && Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
};

/** Filters from a URL query; unknown or malformed values fall back to the defaults. */
export function parseFilters(params: URLSearchParams): LogFilters {
  const filters: LogFilters = { ...DEFAULT_FILTERS };
  for (const key of TEXT_KEYS) filters[key] = params.get(key)?.trim() ?? "";
  for (const key of LIST_KEYS) filters[key] = params.getAll(key).filter((v) => v.trim() !== "");
  filters.page = positiveInt(params.get("page"), DEFAULT_FILTERS.page);
  filters.page_size = positiveInt(params.get("page_size"), DEFAULT_FILTERS.page_size, MAX_PAGE_SIZE);
  filters.sort_by = params.get("sort_by")?.trim() || DEFAULT_FILTERS.sort_by;
  filters.sort_order = params.get("sort_order") === "ascending" ? "ascending" : "descending";
  return filters;
}

/** The URL query of a view: only what differs from the defaults, in a stable order. */
export function filtersToParams(filters: LogFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of TEXT_KEYS) if (filters[key] !== "") params.set(key, filters[key]);
  for (const key of LIST_KEYS) for (const value of filters[key]) params.append(key, value);
  if (filters.page !== DEFAULT_FILTERS.page) params.set("page", String(filters.page));
  if (filters.page_size !== DEFAULT_FILTERS.page_size) params.set("page_size", String(filters.page_size));
  if (filters.sort_by !== DEFAULT_FILTERS.sort_by) params.set("sort_by", filters.sort_by);
  if (filters.sort_order !== DEFAULT_FILTERS.sort_order) params.set("sort_order", filters.sort_order);
  return params;
}

/**
 * What the access-log page keeps in the URL besides its filters: live tail (`live=1`) and the entry
 * whose drawer is open (`entry=<id>`), so a link reopens the same view.
 */
export interface LogView {
  live: boolean;
  entry: string;
}

export const parseLogView = (params: URLSearchParams): LogView => ({
  live: params.get("live") === "1",
  entry: params.get("entry")?.trim() ?? "",
});

/** The URL query of the access-log page: its filters, then its view. */
export function logViewParams(filters: LogFilters, view: LogView): URLSearchParams {
  const params = filtersToParams(filters);
  if (view.live) params.set("live", "1");
  if (view.entry !== "") params.set("entry", view.entry);
  return params;
}

/** A permalink to one entry: its drawer over the log list, whatever the filters. */
export const logEntryHash = (id: string): string => `#/logs?${new URLSearchParams({ entry: id })}`;

/** Live tail watches the newest requests: the first page, newest first. */
export const liveTailFilters = (filters: LogFilters): LogFilters => ({
  ...filters,
  page: 1,
  sort_by: DEFAULT_FILTERS.sort_by,
  sort_order: DEFAULT_FILTERS.sort_order,
});

/** The API query of a view (the API takes the same names). */
export const filtersToQuery = (filters: LogFilters): Query => ({ ...filters });

/** Clicking a column: a new column sorts descending, the same column flips the order. */
export function toggleSort(filters: LogFilters, column: string): LogFilters {
  const sort_order: LogFilters["sort_order"] =
    filters.sort_by === column && filters.sort_order === "descending" ? "ascending" : "descending";
  return { ...filters, sort_by: column, sort_order, page: 1 };
}

/** "a, b ,, c" → ["a", "b", "c"]: how list filters are typed into a text field. */
export const splitList = (text: string): string[] =>
  text
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");

const pad = (n: number) => String(n).padStart(2, "0");

/** A datetime-local input value (the reader's time zone) as RFC 3339 UTC; blank stays blank. */
export function localInputToIso(value: string): string {
  if (value.trim() === "") return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}

/** RFC 3339 as a datetime-local input value in the reader's time zone. */
export function isoToLocalInput(iso: string): string {
  if (iso === "") return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
