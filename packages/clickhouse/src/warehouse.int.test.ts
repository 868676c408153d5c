import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enginesTitle, freshDatabase, removeTempDirs, testEngines } from "./test-engines.js";
import type { Warehouse } from "./warehouse.js";

function tableName(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

describe(`Warehouse on ${enginesTitle}`, () => {
  afterAll(removeTempDirs);

  describe.each(testEngines)("$title", ({ engine, open }) => {
    const database = freshDatabase();
    let wh: Warehouse;
    const events = tableName("events");

    beforeAll(async () => {
      wh = await open(database);
      await wh.command(
        `CREATE TABLE ${events} (
          id String, account_id String, tokens UInt32, tags Array(String), at DateTime64(3),
          cost Decimal(38, 9), big UInt64
        ) ENGINE = MergeTree ORDER BY (account_id, id)`,
      );
      await wh.insert(events, [
        {
          id: "e1",
          account_id: "acc-a",
          tokens: 10,
          tags: ["x"],
          at: "2024-01-01 00:00:00.100",
          cost: "0.5",
          big: 1,
        },
        {
          id: "e2",
          account_id: "acc-a",
          tokens: 20,
          tags: ["y", "z"],
          at: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, 200)),
          cost: "1.25",
          big: 18446744073709551615n,
        },
        { id: "e3", account_id: "acc-b", tokens: 30, tags: [], at: 1704067200300, cost: 2, big: "7" },
      ]);
    });
    afterAll(async () => {
      await wh.command("DROP DATABASE IF EXISTS {db:Identifier}", { db: database });
      await wh.close();
    });

    it("reports its engine and creates the database when missing", async () => {
      expect(wh.engine).toBe(engine);
      const rows = await wh.query("SELECT name FROM system.databases WHERE name = {name:String}", {
        name: database,
      });
      expect(rows).toEqual([{ name: database }]);
    });

    it("binds {name:String}", async () => {
      const rows = await wh.query<{ id: string }>(
        `SELECT id FROM ${events} WHERE account_id = {account:String} ORDER BY id`,
        { account: "acc-a" },
      );
      expect(rows.map((row) => row.id)).toEqual(["e1", "e2"]);
    });

    it("binds {n:UInt32}", async () => {
      const rows = await wh.query<{ id: string }>(
        `SELECT id FROM ${events} WHERE tokens > {n:UInt32} ORDER BY id`,
        {
          n: 15,
        },
      );
      expect(rows.map((row) => row.id)).toEqual(["e2", "e3"]);
    });

    it("binds {ids:Array(String)}, including an empty array", async () => {
      const query = `SELECT id FROM ${events} WHERE id IN {ids:Array(String)} ORDER BY id`;
      expect(await wh.query(query, { ids: ["e1", "e3", "nope"] })).toEqual([{ id: "e1" }, { id: "e3" }]);
      expect(await wh.query(query, { ids: [] })).toEqual([]);
    });

    it("binds {t:DateTime64(3)} from a Date and from a string, to the millisecond", async () => {
      const query = `SELECT id FROM ${events} WHERE at >= {t:DateTime64(3)} ORDER BY id`;
      const fromDate = await wh.query(query, { t: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, 200)) });
      const fromString = await wh.query(query, { t: "2024-01-01 00:00:00.200" });
      expect(fromDate).toEqual([{ id: "e2" }, { id: "e3" }]);
      expect(fromString).toEqual(fromDate);
    });

    it("binds a Date to DateTime (seconds) and Date placeholders", async () => {
      const at = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 999));
      const rows = await wh.query("SELECT {t:DateTime} AS t, {d:Date} AS d, {n:Nullable(DateTime)} AS n", {
        t: at,
        d: at,
        n: null,
      });
      expect(rows).toEqual([{ t: "2024-05-06 07:08:09", d: "2024-05-06", n: null }]);
    });

    it("returns stored DateTime64 values in UTC", async () => {
      const rows = await wh.query(`SELECT id, at FROM ${events} ORDER BY id`);
      expect(rows).toEqual([
        { id: "e1", at: "2024-01-01 00:00:00.100" },
        { id: "e2", at: "2024-01-01 00:00:00.200" },
        { id: "e3", at: "2024-01-01 00:00:00.300" },
      ]);
    });

    it("round-trips strings that would break a hand-built literal", async () => {
      const nasty = "it's a \\ back\tslash\nnew line ' OR 1=1 --";
      const table = tableName("strings");
      await wh.command(`CREATE TABLE ${table} (s String) ENGINE = MergeTree ORDER BY s`);
      await wh.insert(table, [{ s: nasty }]);
      expect(await wh.query(`SELECT s FROM ${table} WHERE s = {s:String}`, { s: nasty })).toEqual([
        { s: nasty },
      ]);
      expect(
        await wh.query("SELECT {s:String} AS s, {a:Array(String)} AS a", { s: nasty, a: [nasty] }),
      ).toEqual([{ s: nasty, a: [nasty] }]);
    });

    it("inserts pre-serialised JSONEachRow lines, with exact decimal text", async () => {
      const table = tableName("lines");
      await wh.command(
        `CREATE TABLE ${table} (id String, at DateTime64(3, 'UTC'), cost Decimal(38, 9)) ENGINE = MergeTree ORDER BY id`,
      );
      const lines = Array.from({ length: 1000 }, (_, i) =>
        JSON.stringify({ id: `l${i}`, at: 1704067200100, cost: "0.000000001" }),
      );
      await wh.insertJSONLines(table, lines);
      await wh.insertJSONLines(table, []);
      expect(
        await wh.query(`SELECT count() AS n, toString(sum(cost)) AS cost, min(at) AS at FROM ${table}`),
      ).toEqual([{ n: "1000", cost: "0.000001", at: "2024-01-01 00:00:00.100" }]);
    });

    it("inserts pre-serialised JSONCompactEachRow lines for a column list, in its order", async () => {
      const table = tableName("compact");
      await wh.command(
        `CREATE TABLE ${table} (id String, at DateTime64(3, 'UTC'), cost Decimal(38, 9), note String DEFAULT 'none')
         ENGINE = MergeTree ORDER BY id`,
      );
      const lines = Array.from({ length: 1000 }, (_, i) =>
        JSON.stringify(["0.000000001", `c${i}`, 1704067200100]),
      );
      await wh.insertJSONLines(table, lines, { columns: ["cost", "id", "at"] });
      expect(
        await wh.query(
          `SELECT count() AS n, toString(sum(cost)) AS cost, min(at) AS at, any(note) AS note FROM ${table}`,
        ),
      ).toEqual([{ n: "1000", cost: "0.000001", at: "2024-01-01 00:00:00.100", note: "none" }]);
      await expect(wh.insertJSONLines(table, lines, { columns: ["id; DROP"] })).rejects.toThrow(
        /column name/,
      );
    });

    it("returns 64-bit integers and decimals as exact strings, 32-bit integers as numbers", async () => {
      const rows = await wh.query(
        `SELECT count() AS n, sum(tokens) AS tokens, max(big) AS big, sum(cost) AS cost, any(toUInt32(1)) AS one
         FROM ${events}`,
      );
      expect(rows).toEqual([{ n: "3", tokens: "60", big: "18446744073709551615", cost: "3.75", one: 1 }]);
    });

    it("runs ALTER ... DELETE with placeholders and returns once it is applied", async () => {
      const table = tableName("deletes");
      await wh.command(`CREATE TABLE ${table} (id String) ENGINE = MergeTree ORDER BY id`);
      await wh.insert(table, [{ id: "keep" }, { id: "drop" }]);
      await wh.command(`ALTER TABLE ${table} DELETE WHERE id = {id:String}`, { id: "drop" });
      expect(await wh.query(`SELECT id FROM ${table}`)).toEqual([{ id: "keep" }]);
    });

    it("treats a retried insert with the same dedupToken as a no-op on a table with a dedup window", async () => {
      const table = tableName("dedup");
      await wh.command(
        `CREATE TABLE ${table} (id String) ENGINE = MergeTree ORDER BY id
         SETTINGS non_replicated_deduplication_window = 1000`,
      );
      const batch = [{ id: "r1" }, { id: "r2" }];
      await wh.insert(table, batch, { dedupToken: "batch-1" });
      await wh.insert(table, batch, { dedupToken: "batch-1" });
      // Same rows under another token are a different batch and are kept.
      await wh.insert(table, batch, { dedupToken: "batch-2" });
      expect(await wh.query(`SELECT count() AS n FROM ${table}`)).toEqual([{ n: "4" }]);
    });

    it("keeps both copies on a MergeTree without a dedup window, token or not", async () => {
      const table = tableName("nodedup");
      await wh.command(`CREATE TABLE ${table} (id String) ENGINE = MergeTree ORDER BY id`);
      await wh.insert(table, [{ id: "r1" }], { dedupToken: "batch-1" });
      await wh.insert(table, [{ id: "r1" }], { dedupToken: "batch-1" });
      expect(await wh.query(`SELECT count() AS n FROM ${table}`)).toEqual([{ n: "2" }]);
    });

    it("collapses duplicates by key on a ReplacingMergeTree when read with FINAL", async () => {
      const table = tableName("replacing");
      await wh.command(`CREATE TABLE ${table} (id String, v UInt32) ENGINE = ReplacingMergeTree ORDER BY id`);
      await wh.insert(table, [{ id: "r1", v: 1 }]);
      await wh.insert(table, [{ id: "r1", v: 1 }]);
      expect(await wh.query(`SELECT count() AS n FROM ${table} FINAL`)).toEqual([{ n: "1" }]);
    });

    it("sums 100,000 rows of one nano-dollar exactly, as Decimal(38, 9) and as Int64 nano-USD", async () => {
      const table = tableName("money");
      await wh.command(
        `CREATE TABLE ${table} (cost Decimal(38, 9), cost_nano Int64) ENGINE = MergeTree ORDER BY tuple()`,
      );
      const rows = Array.from({ length: 100_000 }, () => ({ cost: "0.000000001", cost_nano: 1 }));
      await wh.insert(table, rows);
      const [sums] = await wh.query<{ cost: string; nano: string }>(
        `SELECT sum(cost) AS cost, sum(cost_nano) AS nano FROM ${table}`,
      );
      expect(sums).toEqual({ cost: "0.0001", nano: "100000" });
      expect(await wh.query(`SELECT cost FROM ${table} LIMIT 1`)).toEqual([{ cost: "0.000000001" }]);
    });

    it("refuses a Date whose placeholder is not a date type", async () => {
      await expect(wh.query("SELECT {s:String} AS s", { s: new Date() })).rejects.toThrow(/DateTime64/);
    });
  });
});
