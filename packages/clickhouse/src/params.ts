/**
 * Query parameters and insert payloads, normalised once here so both engines receive
 * byte-identical input. Both engines bind `{name:Type}` placeholders server-side (chDB's
 * queryBind was verified for String, UInt32, Array(String), DateTime64(3), Decimal,
 * Int64/UInt64 as bigint, Nullable, Map, Bool, UUID, Date), so no value is ever rendered
 * into SQL text; the only thing we rewrite is how a JS Date is spelled.
 */

// `{name:Type}`; a type never contains braces, so the first `}` closes the placeholder.
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;

/** Declared ClickHouse type of each placeholder in `sql`, by name. */
export function placeholderTypes(sql: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of sql.matchAll(PLACEHOLDER)) {
    const [, name, type] = match;
    if (name !== undefined && type !== undefined) types.set(name, type);
  }
  return types;
}

// Nullable(...) / LowCardinality(...) do not change how a value is spelled.
function baseType(type: string): string {
  const wrapped = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(type.trim());
  return wrapped?.[1] === undefined ? type.trim() : baseType(wrapped[1]);
}

/**
 * Spells a Date for the placeholder's declared type. The two engines' own Date
 * formatting differs (chDB sends 'YYYY-MM-DD HH:MM:SS' and drops milliseconds, the
 * HTTP client sends Unix seconds with a fraction, which a DateTime placeholder
 * refuses), so we choose: Unix seconds — right whatever timezone the column or
 * placeholder declares — with milliseconds only for DateTime64; a UTC calendar day for
 * Date/Date32.
 */
export function formatDateParam(value: Date, type: string | undefined, name: string): string {
  const ms = value.getTime();
  if (Number.isNaN(ms)) throw new Error(`query parameter ${name} is an invalid Date`);
  // The engine reads "-0.001" as +0.001; DateTime cannot go below 1970 anyway.
  if (ms < 0) throw new Error(`query parameter ${name} is before 1970; pass it as a string`);
  const base = type === undefined ? "" : baseType(type);
  const seconds = Math.floor(ms / 1000);
  if (base.startsWith("DateTime64")) return `${seconds}.${String(ms - seconds * 1000).padStart(3, "0")}`;
  if (base === "DateTime" || base.startsWith("DateTime(")) return String(seconds);
  if (base === "Date" || base === "Date32") return value.toISOString().slice(0, 10);
  throw new Error(
    `query parameter ${name} is a Date but its placeholder is {${name}:${type ?? "?"}}; ` +
      "declare it DateTime, DateTime64(n) or Date",
  );
}

function containsDate(value: unknown): boolean {
  if (value instanceof Date) return true;
  if (Array.isArray(value)) return value.some(containsDate);
  if (value instanceof Map) return [...value.values()].some(containsDate);
  return false;
}

/** Params as both engines should receive them. */
export function bindParams(
  sql: string,
  params: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (params === undefined) return {};
  const types = placeholderTypes(sql);
  const bound: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value instanceof Date) {
      bound[name] = formatDateParam(value, types.get(name), name);
    } else if (containsDate(value)) {
      // Inside arrays each engine would format Dates its own way; make the caller choose.
      throw new Error(`query parameter ${name} holds Dates inside a collection; pass ISO strings or numbers`);
    } else {
      bound[name] = value;
    }
  }
  return bound;
}

// bigint is how a caller keeps a 64-bit value exact; JSONEachRow accepts it quoted.
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/**
 * One row as JSON, the same bytes for both engines (the server client is configured to
 * stringify with this). Dates become ISO-8601 strings (Date#toJSON), which the pinned
 * `date_time_input_format=best_effort` parses into DateTime/DateTime64 columns.
 */
export function toJSONRow(row: unknown): string {
  return JSON.stringify(row, jsonValue);
}

/** Rows as a JSONEachRow payload, one line each. */
export function toJSONEachRow(rows: readonly Record<string, unknown>[]): string {
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) lines[i] = toJSONRow(rows[i]);
  return rows.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** Parses a JSONEachRow result (one object per line). */
export function parseJSONEachRow<T>(text: string): T[] {
  const rows: T[] = [];
  for (const line of text.split("\n")) {
    if (line.length > 0) rows.push(JSON.parse(line) as T);
  }
  return rows;
}
