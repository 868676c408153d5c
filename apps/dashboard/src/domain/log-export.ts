import type { AccessLogEntry, AccessLogEntryView, AccessLogPage } from "@agentnet/contracts";
import type { Query } from "../api/client";
import { toCsv } from "./csv";
import { filtersToQuery, type LogFilters, MAX_PAGE_SIZE } from "./filters";

/**
 * An export holds every row of the current filter, read page by page, up to this many: a file a
 * spreadsheet opens and a browser tab builds in memory. Wider views are narrowed with the filters.
 */
export const EXPORT_ROW_CAP = 10_000;

export type ExportFormat = "csv" | "json";

/** Every field of an entry, in the spec's order: the CSV header. */
export const EXPORT_COLUMNS = [
  "id",
  "service_id",
  "timestamp",
  "status_code",
  "duration_ms",
  "user_id",
  "source_ip",
  "method",
  "host",
  "path",
  "provider",
  "model",
  "session_id",
  "resolved_provider_id",
  "selected_policy_id",
  "decision",
  "deny_reason",
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cached_input_tokens",
  "cache_creation_tokens",
  "cost_usd",
  "input_cost_usd",
  "cached_input_cost_usd",
  "cache_creation_cost_usd",
  "output_cost_usd",
  "cache_cost_usd",
  "stream",
  "group_ids",
  "request_prompt",
  "response_completion",
] as const satisfies readonly (keyof AccessLogEntry)[];

/**
 * The API query of an export: the view's filters and order, the largest pages, and an end pinned
 * to when the export started when the view sets none, so requests arriving meanwhile do not shift
 * rows between pages.
 */
export function exportQuery(filters: LogFilters, startedAt: Date): Query {
  return {
    ...filtersToQuery(filters),
    page_size: MAX_PAGE_SIZE,
    end_date: filters.end_date || startedAt.toISOString(),
  };
}

export interface CollectedEntries {
  entries: AccessLogEntry[];
  /** Rows the filter matches, which is more than `entries.length` when the cap cut the export. */
  total: number;
  capped: boolean;
}

/** Entries whose texts are fetched at once while an export completes the ones the list cut. */
const WHOLE_ENTRY_READS_AT_ONCE = 4;

const isPreview = (entry: AccessLogEntryView) =>
  entry.request_prompt_truncated === true || entry.response_completion_truncated === true;

/** The entry as exported: the list's flags say nothing once the texts are whole. */
const withoutFlags = ({
  request_prompt_truncated: _prompt,
  response_completion_truncated: _completion,
  ...entry
}: AccessLogEntryView): AccessLogEntry => entry;

/**
 * Reads pages 1, 2, … until the last page or the cap, reporting rows read so far; then reads whole
 * every entry whose prompt or completion the list carried as a preview, so the file holds the texts
 * as captured. An entry gone meanwhile (retention) keeps its preview.
 */
export async function collectEntries(
  readPage: (page: number) => Promise<AccessLogPage>,
  onProgress: (read: number, total: number) => void = () => undefined,
  readEntry: (id: string) => Promise<AccessLogEntryView | undefined> = async () => undefined,
): Promise<CollectedEntries> {
  const byId = new Map<string, AccessLogEntryView>();
  let total = 0;
  for (let page = 1; byId.size < EXPORT_ROW_CAP; page += 1) {
    const answer = await readPage(page);
    total = answer.total_records;
    for (const entry of answer.data) byId.set(entry.id, entry);
    onProgress(Math.min(byId.size, EXPORT_ROW_CAP), total);
    if (answer.data.length === 0 || page >= answer.total_pages) break;
  }
  const entries = [...byId.values()].slice(0, EXPORT_ROW_CAP);
  const previews = entries.flatMap((entry, index) => (isPreview(entry) ? [index] : []));
  for (let next = 0; next < previews.length; next += WHOLE_ENTRY_READS_AT_ONCE) {
    await Promise.all(
      previews.slice(next, next + WHOLE_ENTRY_READS_AT_ONCE).map(async (index) => {
        const preview = entries[index];
        const whole = preview && (await readEntry(preview.id));
        if (whole) entries[index] = whole;
      }),
    );
  }
  return {
    entries: entries.map(withoutFlags),
    total: Math.max(total, entries.length),
    capped: total > entries.length,
  };
}

const cellsOf = (entry: AccessLogEntry) =>
  EXPORT_COLUMNS.map((column) => {
    const value = entry[column];
    return Array.isArray(value) ? value.join(" ") : value;
  });

/** The export file's text and media type. */
export function exportFile(format: ExportFormat, entries: readonly AccessLogEntry[]) {
  return format === "csv"
    ? { text: toCsv(EXPORT_COLUMNS, entries.map(cellsOf)), type: "text/csv;charset=utf-8" }
    : { text: `${JSON.stringify(entries, null, 2)}\n`, type: "application/json" };
}

/** access-logs-2025-03-10T12-30-05Z.csv: sortable, and valid on every file system. */
export const exportFileName = (format: ExportFormat, at: Date): string =>
  `access-logs-${at
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-")}.${format}`;

const count = new Intl.NumberFormat("en-US").format;
const requests = (n: number) => `${count(n)} ${n === 1 ? "request" : "requests"}`;

/** What the export says when done; a capped one says how to get the rest. */
export function exportSummary(result: Pick<CollectedEntries, "total" | "capped">, file: string): string {
  if (!result.capped) return `Exported ${requests(result.total)} to ${file}.`;
  return `Exported the first ${count(EXPORT_ROW_CAP)} of ${count(result.total)} requests to ${file}: an export stops at ${count(EXPORT_ROW_CAP)} rows. Narrow the filters (a shorter time range) to export the rest.`;
}
