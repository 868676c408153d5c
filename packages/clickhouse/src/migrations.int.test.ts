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

    it("gives a warehouse migrated before 012 its sessions in access_log_session_keys, each once, and keeps filling both tables", async () => {
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
      // Two sessions (an entry of one twice, as after a redelivery) and an entry of none.
      const redelivered = entry("r2", "s-a", 2);
      await target.insert("access_logs", [
        entry("r1", "s-a", 1),
        redelivered,
        entry("r3", "s-b", 3),
        entry("r4", "", 4),
      ]);
      await target.insert("access_logs", [redelivered]);
      const sessions = () =>
        target.query(
          `SELECT session_key = sipHash64('s-a') AS is_a, ended_at FROM access_log_session_keys FINAL
           WHERE account_id = 'acc-upgraded' ORDER BY ended_at`,
        );

      expect((await runMigrations(target, MIGRATIONS_DIR)).map((m) => m.version)).toContain(12);
      expect(await sessions()).toEqual([
        { is_a: 1, ended_at: "2026-11-01 00:00:02.000" },
        { is_a: 0, ended_at: "2026-11-01 00:00:03.000" },
      ]);
      // A rerun (a file that failed halfway runs again from the top) counts nothing twice.
      await target.command(
        "ALTER TABLE schema_migrations DELETE WHERE version = 12 SETTINGS mutations_sync = 1",
      );
      expect((await runMigrations(target, MIGRATIONS_DIR)).map((m) => m.version)).toEqual([12]);
      // Later entries reach both tables: replicas of the version before read the old one meanwhile.
      await target.insert("access_logs", [entry("r5", "s-a", 9)]);
      expect(await sessions()).toEqual([
        { is_a: 0, ended_at: "2026-11-01 00:00:03.000" },
        { is_a: 1, ended_at: "2026-11-01 00:00:09.000" },
      ]);
      expect(
        await target.query(
          "SELECT session_id, max(ended_at) AS ended_at FROM access_log_sessions WHERE account_id = 'acc-upgraded' GROUP BY session_id ORDER BY session_id",
        ),
      ).toEqual([
        { session_id: "s-a", ended_at: "2026-11-01 00:00:09.000" },
        { session_id: "s-b", ended_at: "2026-11-01 00:00:03.000" },
      ]);
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
