import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { drainPending, Session } from "chdb";
import { bindParams, parseJSONEachRow, toJSONEachRow } from "./params.js";
import { assertColumnNames, assertTableName, chdbConnectionArgs, INSERT_SETTINGS } from "./settings.js";
import type { Warehouse } from "./warehouse.js";

/**
 * libchdb runs one embedded engine per process bound to one data directory, so a chDB
 * data dir is owned by exactly one process (the telemetry service). Within it we keep one
 * Session per (dir, database), shared by every openWarehouse call and reference-counted:
 * the session's connection carries `USE <database>`, which is why a second database on
 * the same dir gets its own connection (libchdb allows several on one dir).
 */
interface SharedSession {
  readonly dir: string;
  readonly session: Session;
  readonly ready: Promise<void>;
  refs: number;
}
const sessions = new Map<string, SharedSession>();

function openShared(dir: string, database: string): SharedSession {
  const key = `${dir}\u0000${database}`;
  const existing = sessions.get(key);
  if (existing !== undefined) return existing;
  const other = [...sessions.values()].find((shared) => shared.dir !== dir);
  if (other !== undefined) {
    throw new Error(
      `chDB data dir ${other.dir} is already open in this process; a process owns one chDB data dir ` +
        `(close its warehouses before opening ${dir})`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const session = openSession(dir);
  const ready = (async () => {
    await session.queryBindAsync("CREATE DATABASE IF NOT EXISTS {db:Identifier}", { db: database });
    await session.queryBindAsync("USE {db:Identifier}", { db: database });
  })();
  const shared: SharedSession = { dir, session, ready, refs: 0 };
  sessions.set(key, shared);
  // A failed start must not leave a broken session cached for the next caller.
  ready.catch(() => {
    sessions.delete(key);
    session.close();
  });
  return shared;
}

/**
 * libchdb takes an exclusive lock on `<dir>/status` and writes its process id there while a
 * process has the dir open; the lock dies with the process, so a killed owner blocks nothing. When
 * the open fails while that file names an owner, the reason is another process on the same dir:
 * say so rather than chDB's bare "Failed to create connection".
 */
function openSession(dir: string): Session {
  try {
    return new Session(dir, { connectionArgs: chdbConnectionArgs() });
  } catch (error) {
    const owner = statusFileOwner(dir);
    if (owner === undefined) throw error;
    throw new Error(
      `chDB data dir ${dir} is in use by another process (PID ${owner}): chDB's files belong to one ` +
        "process, so one telemetry instance runs on chDB; several need a ClickHouse server (CLICKHOUSE_URL)",
      { cause: error },
    );
  }
}

function statusFileOwner(dir: string): string | undefined {
  try {
    return /^PID: (\d+)/m.exec(readFileSync(join(dir, "status"), "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Lines as one newline-terminated UTF-8 payload, encoded straight into a growing buffer: joining
 * 10,000 lines into one string first and then encoding it copied every byte twice and left large
 * strings for the collector.
 */
export function encodeLines(lines: readonly string[]): Buffer {
  let buffer = Buffer.allocUnsafe(Math.max(1024, lines.length * 512));
  let used = 0;
  for (const line of lines) {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8, plus the newline.
    const worst = line.length * 3 + 1;
    if (buffer.length - used < worst) {
      const grown = Buffer.allocUnsafe(Math.max(buffer.length * 2, used + worst));
      buffer.copy(grown, 0, 0, used);
      buffer = grown;
    }
    used += buffer.write(line, used);
    buffer[used++] = 0x0a;
  }
  return buffer.subarray(0, used);
}

export async function openChdbWarehouse(dataDir: string, database: string): Promise<Warehouse> {
  const dir = resolve(dataDir);
  const key = `${dir}\u0000${database}`;
  const shared = openShared(dir, database);
  shared.refs += 1;
  try {
    await shared.ready;
  } catch (error) {
    shared.refs -= 1;
    throw error;
  }
  const { session } = shared;
  let closed = false;

  const run = async (sql: string, params: Record<string, unknown> | undefined): Promise<string> => {
    if (closed) throw new Error("warehouse is closed");
    // Unparameterised SQL skips chDB's process-wide parameter queue (it serialises
    // every bound query) and so runs in parallel with other queries.
    const result =
      params === undefined
        ? await session.queryAsync(sql, { format: "JSONEachRow" })
        : await session.queryBindAsync(sql, bindParams(sql, params), { format: "JSONEachRow" });
    return result.text();
  };

  // Raw JSON lines: the engine parses them off the event loop, the same payload the server gets.
  const insertPayload = async (
    table: string,
    payload: string | Buffer,
    options: { dedupToken?: string; columns?: readonly string[] } | undefined,
  ) => {
    if (closed) throw new Error("warehouse is closed");
    if (payload.length === 0) return;
    const token = options?.dedupToken;
    const columns = options?.columns;
    await session.insert({
      table: assertTableName(table),
      values: typeof payload === "string" ? Buffer.from(payload) : payload,
      ...(columns === undefined
        ? { format: "JSONEachRow" }
        : { format: "JSONCompactEachRow", columns: assertColumnNames(columns) }),
      settings:
        token === undefined ? INSERT_SETTINGS : { ...INSERT_SETTINGS, insert_deduplication_token: token },
    });
  };

  return {
    engine: "chdb",
    database,
    async query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      return parseJSONEachRow<T>(await run(sql, params));
    },
    async command(sql, params) {
      await run(sql, params);
    },
    async insert(table, rows, options) {
      await insertPayload(table, rows.length === 0 ? "" : toJSONEachRow(rows), options);
    },
    async insertJSONLines(table, lines, options) {
      await insertPayload(table, encodeLines(lines), options);
    },
    async close() {
      if (closed) return;
      closed = true;
      shared.refs -= 1;
      if (shared.refs > 0) return;
      sessions.delete(key);
      session.close();
      // close() defers teardown behind running operations; wait so another data dir
      // (e.g. the next test file's) may open straight after.
      await drainPending();
    },
  };
}
