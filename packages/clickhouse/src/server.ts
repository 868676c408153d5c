import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { createClient } from "@clickhouse/client";
import { bindParams, toJSONRow } from "./params.js";
import { assertColumnNames, assertTableName, INSERT_SETTINGS, SHARED_SETTINGS } from "./settings.js";
import type { Warehouse } from "./warehouse.js";

export interface ServerOptions {
  url: string;
  database: string;
  username?: string;
  password?: string;
}

/** A ClickHouse server over HTTP(S) via @clickhouse/client. */
export async function openServerWarehouse(options: ServerOptions): Promise<Warehouse> {
  const base = {
    url: options.url,
    username: options.username,
    password: options.password,
    clickhouse_settings: { ...SHARED_SETTINGS },
    // Rows are serialised exactly as for chDB: bigint as strings, Dates as ISO-8601.
    json: { parse: JSON.parse, stringify: toJSONRow },
  };
  // The HTTP interface refuses every request naming a database that does not exist,
  // so the database is created through a client bound to the default one.
  const bootstrap = createClient(base);
  try {
    await bootstrap.command({
      query: "CREATE DATABASE IF NOT EXISTS {db:Identifier}",
      query_params: { db: options.database },
    });
  } finally {
    await bootstrap.close();
  }
  const client = createClient({ ...base, database: options.database });

  return {
    engine: "server",
    database: options.database,
    async query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      const result = await client.query({
        query: sql,
        query_params: bindParams(sql, params),
        format: "JSONEachRow",
      });
      return result.json<T>();
    },
    async command(sql, params) {
      await client.command({ query: sql, query_params: bindParams(sql, params) });
    },
    async insert(table, rows, options) {
      if (rows.length === 0) return;
      const token = options?.dedupToken;
      await client.insert({
        table: assertTableName(table),
        values: rows,
        format: "JSONEachRow",
        clickhouse_settings:
          token === undefined
            ? { ...INSERT_SETTINGS }
            : { ...INSERT_SETTINGS, insert_deduplication_token: token },
      });
    },
    async insertJSONLines(table, lines, options) {
      if (lines.length === 0) return;
      const token = options?.dedupToken;
      const columns = options?.columns;
      const target =
        columns === undefined
          ? `${assertTableName(table)} FORMAT JSONEachRow`
          : `${assertTableName(table)} (${assertColumnNames(columns).join(", ")}) FORMAT JSONCompactEachRow`;
      // The client only streams raw text for TSV/CSV-like formats; exec sends these bytes as the body.
      const result = await client.exec({
        query: `INSERT INTO ${target}`,
        values: Readable.from([`${lines.join("\n")}\n`]),
        clickhouse_settings:
          token === undefined
            ? { ...INSERT_SETTINGS }
            : { ...INSERT_SETTINGS, insert_deduplication_token: token },
      });
      result.stream.resume();
      await finished(result.stream);
    },
    async close() {
      await client.close();
    },
  };
}
