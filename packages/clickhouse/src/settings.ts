/**
 * Settings pinned on both engines so the same SQL gives the same answer. Each one
 * differs between chDB 3.4 (libchdb 26.7) defaults and a stock server, or matters
 * enough to be stated rather than inherited.
 */
export const SHARED_SETTINGS = {
  // 64-bit integers (count(), sum() of Int64) and decimals come back as JSON strings:
  // JSON.parse would silently round anything past 2^53 or past 15-17 significant digits.
  // chDB defaults both to 0, a server quotes 64-bit ints by default; pin both to 1.
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_decimals: 1,
  // DateTime values render and parse in UTC whatever the host or server timezone is,
  // so epoch-aligned windows and the strings we return mean the same on both engines.
  session_timezone: "UTC",
  // Inserted rows may carry ISO-8601 strings (what JSON.stringify makes of a Date).
  date_time_input_format: "best_effort",
  // ALTER ... DELETE returns once the mutation is done, not when it is queued.
  mutations_sync: "1",
} as const;

/**
 * Settings on every insert. chDB defaults to async_insert=1; we want an insert's promise
 * to mean the rows are in a part (telemetry acks JetStream after it), and the plain
 * insert path is the one whose deduplication honours insert_deduplication_token.
 */
export const INSERT_SETTINGS = { async_insert: 0, insert_deduplicate: 1 } as const;

/** The same settings in `clickhouse local` command-line form, for a chDB session. */
export function chdbConnectionArgs(): string[] {
  return Object.entries(SHARED_SETTINGS).map(([name, value]) => `--${name}=${value}`);
}

/** Database and table names are configuration, not user input; still, refuse anything odd. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

export function assertTableName(table: string): string {
  if (!TABLE_NAME.test(table)) throw new Error(`invalid table name ${JSON.stringify(table)}`);
  return table;
}

/** Column names of an insert's column list: plain identifiers only, like table names. */
export function assertColumnNames(columns: readonly string[]): readonly string[] {
  for (const column of columns) {
    if (!IDENTIFIER.test(column)) throw new Error(`invalid column name ${JSON.stringify(column)}`);
  }
  return columns;
}
