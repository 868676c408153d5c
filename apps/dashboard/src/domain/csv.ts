/**
 * CSV as RFC 4180 writes it: records end with CRLF, a field is quoted when it holds a comma, a
 * double quote, CR or LF, and a double quote inside a quoted field is doubled.
 */
export type CsvCell = string | number | boolean | undefined;

// A spreadsheet runs a cell starting with one of these as a formula. The cells hold what callers
// sent (model names, paths, prompts): opening an export must show them, never run them.
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(cell: CsvCell): string {
  if (cell === undefined) return "";
  if (typeof cell !== "string") return String(cell);
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A header record, then one record per row. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return [header, ...rows].map((record) => `${record.map(csvField).join(",")}\r\n`).join("");
}
