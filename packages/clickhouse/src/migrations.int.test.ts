import { existsSync, writeFileSync } from "node:fs";
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
