import { afterAll, describe, expect, it } from "vitest";
import { openWarehouse } from "./index.js";
import { chdbDataDir, freshDatabase, removeTempDirs, tempDir } from "./test-engines.js";

// chDB only: these are about the one-data-dir-per-process rule of the embedded engine.
describe("chdb sessions", () => {
  afterAll(removeTempDirs);

  it("shares one session per data dir and database; closing one handle keeps the other working", async () => {
    const database = freshDatabase();
    const first = await openWarehouse({ dataDir: chdbDataDir(), database });
    const second = await openWarehouse({ dataDir: chdbDataDir(), database });
    await first.command("CREATE TABLE t (id String) ENGINE = MergeTree ORDER BY id");
    await second.insert("t", [{ id: "a" }]);
    await first.close();
    await first.close();
    expect(await second.query("SELECT id FROM t")).toEqual([{ id: "a" }]);
    await expect(first.query("SELECT 1")).rejects.toThrow(/closed/);
    await second.close();
  });

  it("keeps databases apart on the same data dir", async () => {
    const a = await openWarehouse({ dataDir: chdbDataDir(), database: freshDatabase() });
    const b = await openWarehouse({ dataDir: chdbDataDir(), database: freshDatabase() });
    await a.command("CREATE TABLE only_in_a (id String) ENGINE = MergeTree ORDER BY id");
    expect(await a.query("SELECT currentDatabase() AS db")).toEqual([{ db: a.database }]);
    expect(await b.query("SELECT currentDatabase() AS db")).toEqual([{ db: b.database }]);
    await expect(b.query("SELECT * FROM only_in_a")).rejects.toThrow();
    await a.close();
    await b.close();
  });

  it("refuses a second data dir while one is open, and allows it once all handles are closed", async () => {
    const held = await openWarehouse({ dataDir: chdbDataDir(), database: freshDatabase() });
    const otherDir = tempDir("agn-clickhouse-other-");
    await expect(openWarehouse({ dataDir: otherDir, database: "other" })).rejects.toThrow(/already open/);
    await held.close();
    const other = await openWarehouse({ dataDir: otherDir, database: "other" });
    expect(await other.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await other.close();
  });

  it("asks for a url or a dataDir", async () => {
    await expect(openWarehouse({ database: "x" })).rejects.toThrow(/url or dataDir/);
    await expect(openWarehouse({ dataDir: chdbDataDir(), database: "bad-name" })).rejects.toThrow(
      /identifier/,
    );
  });
});
