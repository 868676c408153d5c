import { copyFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, runMigrations } from "./migrations.js";
import { enginesTitle, freshDatabase, removeTempDirs, tempDir, testEngines } from "./test-engines.js";
import type { Warehouse } from "./warehouse.js";

const FIXTURES = fileURLToPath(new URL("./fixtures/migrations/", import.meta.url));

describe(`runMigrations on ${enginesTitle}`, () => {
  afterAll(removeTempDirs);

  describe.each(testEngines)("$title", ({ open }) => {
    const opened: Warehouse[] = [];
    const fresh = async (): Promise<Warehouse> => {
      const wh = await open(freshDatabase());
      opened.push(wh);
      return wh;
    };
    let wh: Warehouse;

    beforeAll(async () => {
      wh = await fresh();
    });
    afterAll(async () => {
      for (const each of opened) {
        await each.command("DROP DATABASE IF EXISTS {db:Identifier}", { db: each.database });
        await each.close();
      }
    });

    it("applies numbered files in order, each once, and records them", async () => {
      const first = await runMigrations(wh, FIXTURES);
      expect(first.map((m) => [m.version, m.name])).toEqual([
        [1, "create_items"],
        [2, "add_notes"],
      ]);
      const second = await runMigrations(wh, FIXTURES);
      expect(second).toEqual([]);

      const recorded = await wh.query("SELECT version, name FROM schema_migrations ORDER BY version");
      expect(recorded).toEqual([
        { version: 1, name: "create_items" },
        { version: 2, name: "add_notes" },
      ]);
      // Both statements of 002 ran, and the mid-line `;` stayed inside its string.
      await wh.insert("items", [{ account_id: "a", id: "i1", created_at: new Date() }]);
      expect(await wh.query("SELECT note FROM items")).toEqual([{ note: "a;b" }]);
      expect(await wh.query("SELECT count() AS n FROM item_tags")).toEqual([{ n: "0" }]);
    });

    it("leaves a failed file unrecorded so it runs again once fixed", async () => {
      const target = await fresh();
      const dir = tempDir("agn-migrations-");
      writeFileSync(
        join(dir, "001_ok.sql"),
        "CREATE TABLE IF NOT EXISTS ok (id String) ENGINE = MergeTree ORDER BY id;\n",
      );
      writeFileSync(
        join(dir, "002_broken.sql"),
        "CREATE TABLE IF NOT EXISTS broken (id Strin) ENGINE = MergeTree ORDER BY id;\n",
      );
      await expect(runMigrations(target, dir)).rejects.toThrow();
      expect(await target.query("SELECT version FROM schema_migrations")).toEqual([{ version: 1 }]);

      writeFileSync(
        join(dir, "002_broken.sql"),
        "CREATE TABLE IF NOT EXISTS broken (id String) ENGINE = MergeTree ORDER BY id;\n",
      );
      expect((await runMigrations(target, dir)).map((m) => m.version)).toEqual([2]);
    });

    it("moves the sessions of a warehouse migrated before 012 to access_log_session_keys, each counted once", async () => {
      const target = await fresh();
      const before012 = tempDir("agn-migrations-");
      for (const file of readdirSync(MIGRATIONS_DIR).filter((name) => /^0(0\d|1[01])_.*\.sql$/.test(name))) {
        copyFileSync(join(MIGRATIONS_DIR, file), join(before012, file));
      }
      expect((await runMigrations(target, before012)).at(-1)?.version).toBe(11);
      const entry = (id: string, session_id: string, second: number) => ({
        id,
        account_id: "acc-upgraded",
        session_id,
        timestamp: new Date(Date.UTC(2026, 10, 1, 0, 0, second)),
      });
      // Two sessions (one of them twice, as after a redelivery) and an entry of none.
      const entries = [entry("r1", "s-a", 1), entry("r2", "s-a", 2), entry("r3", "s-b", 3), entry("r4", "", 4)];
      await target.insert("access_logs", entries);
      await target.insert("access_logs", [entries[1]]);

      expect((await runMigrations(target, MIGRATIONS_DIR)).map((m) => m.version)).toContain(12);
      expect(
        await target.query(
          "SELECT count() AS n, max(ended_at) AS last FROM access_log_session_keys FINAL WHERE account_id = 'acc-upgraded'",
        ),
      ).toEqual([{ n: "2", last: "2026-11-01 00:00:03.000" }]);
      expect(
        await target.query(
          "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'access_log_sessions%'",
        ),
      ).toEqual([]);
    });

    it("refuses two files with the same version", async () => {
      const dir = tempDir("agn-migrations-");
      writeFileSync(join(dir, "001_a.sql"), "SELECT 1;\n");
      writeFileSync(join(dir, "01_b.sql"), "SELECT 1;\n");
      await expect(runMigrations(await fresh(), dir)).rejects.toThrow(/share version 1/);
    });
  });

  it("MIGRATIONS_DIR points at the repository's infra/clickhouse", () => {
    expect(MIGRATIONS_DIR.replaceAll("\\", "/")).toMatch(/\/infra\/clickhouse\/$/);
    expect(existsSync(join(MIGRATIONS_DIR, "README.md"))).toBe(true);
  });
});
