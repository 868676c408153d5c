import { z } from "zod";
import { IDENTIFIER } from "./settings.js";

/**
 * One interface over a ClickHouse server and chDB (in-process ClickHouse), so the
 * same SQL runs on both. Values always travel as `{name:Type}` placeholders.
 */
export interface Warehouse {
  readonly engine: "server" | "chdb";
  readonly database: string;
  /**
   * SELECT with `{name:Type}` placeholders bound from params; rows parsed from JSONEachRow.
   * 64-bit integers and decimals come back as strings on both engines (see settings.ts).
   */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /** DDL / ALTER / DELETE etc. with placeholders; one statement per call. */
  command(sql: string, params?: Record<string, unknown>): Promise<void>;
  /**
   * Inserts JS objects as JSONEachRow and resolves once the rows are written (no async
   * insert). `dedupToken` sets insert_deduplication_token: a retried insert with the same
   * token is dropped by tables that keep a deduplication window — ReplicatedMergeTree by
   * default, plain MergeTree only with `SETTINGS non_replicated_deduplication_window = N`.
   * Both engines behave the same; on other tables the token has no effect.
   */
  insert(
    table: string,
    rows: readonly Record<string, unknown>[],
    options?: { dedupToken?: string },
  ): Promise<void>;
  /**
   * Inserts rows the caller already serialised, one JSON object text per element (JSONEachRow),
   * with the same settings and resolution as `insert`. For hot paths: the caller can build each
   * line with a plain `JSON.stringify` of a fixed-shape object, and nothing is serialised twice.
   * With `columns`, each line is instead a JSON array of those columns' values in that order
   * (JSONCompactEachRow): no field names to write, send or parse, which at ~30 columns halves
   * the engine's parsing time.
   */
  insertJSONLines(
    table: string,
    lines: readonly string[],
    options?: { dedupToken?: string; columns?: readonly string[] },
  ): Promise<void>;
  /** Releases this handle; idempotent. */
  close(): Promise<void>;
}

export const WarehouseOptions = z
  .object({
    /** ClickHouse server HTTP(S) URL; when set, the server engine is used. */
    url: z.string().url().optional(),
    database: z.string().regex(IDENTIFIER, "database must be a plain identifier"),
    /** chDB data directory; used when no url is given. */
    dataDir: z.string().min(1).optional(),
    username: z.string().optional(),
    password: z.string().optional(),
  })
  .superRefine((options, ctx) => {
    if (options.url === undefined && options.dataDir === undefined) {
      ctx.addIssue({ code: "custom", path: ["dataDir"], message: "either url or dataDir is required" });
    }
  });
export type WarehouseOptions = z.input<typeof WarehouseOptions>;
