import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Warehouse } from "./warehouse.js";

/** The repository's ClickHouse migrations, `infra/clickhouse/NNN_name.sql`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../infra/clickhouse/", import.meta.url));

const MIGRATION_FILE = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  file: string;
}

/** Numbered `.sql` files in `dir`, ordered by version; anything else (README.md) is ignored. */
export async function listMigrations(dir: string): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of await readdir(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (match?.[1] === undefined || match[2] === undefined) continue;
    migrations.push({ version: Number(match[1]), name: match[2], file: join(dir, file) });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    const previous = migrations[i - 1];
    const current = migrations[i];
    if (previous !== undefined && current !== undefined && previous.version === current.version) {
      throw new Error(`two migrations share version ${current.version}: ${previous.file}, ${current.file}`);
    }
  }
  return migrations;
}

/**
 * Statements of a migration file. A statement ends with `;` at the end of a line, so a
 * `;` inside a string or mid-line stays put; chunks holding only comments are dropped.
 */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.replace(/^\s*--.*$/gm, "").trim().length > 0);
}

const CREATE_SCHEMA_MIGRATIONS = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  applied_at DateTime
) ENGINE = MergeTree ORDER BY version`;

/**
 * Applies, in version order, each migration in `dir` not yet recorded in
 * `schema_migrations`, and records it. Returns the migrations it applied.
 *
 * ClickHouse has no transactional DDL: a file that fails halfway leaves its earlier
 * statements applied and is not recorded, so it runs again from the top next time —
 * write statements that tolerate that (`IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`).
 * The same holds if two processes start at once, which is why only the telemetry
 * service runs migrations.
 */
export async function runMigrations(warehouse: Warehouse, dir: string): Promise<Migration[]> {
  await warehouse.command(CREATE_SCHEMA_MIGRATIONS);
  const rows = await warehouse.query<{ version: number }>("SELECT version FROM schema_migrations");
  const done = new Set(rows.map((row) => Number(row.version)));
  const applied: Migration[] = [];
  for (const migration of await listMigrations(dir)) {
    if (done.has(migration.version)) continue;
    for (const statement of splitStatements(await readFile(migration.file, "utf8"))) {
      await warehouse.command(statement);
    }
    await warehouse.insert("schema_migrations", [
      { version: migration.version, name: migration.name, applied_at: new Date() },
    ]);
    applied.push(migration);
  }
  return applied;
}
