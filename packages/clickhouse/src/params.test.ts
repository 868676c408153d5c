import { describe, expect, it } from "vitest";
import { splitStatements } from "./migrations.js";
import { bindParams, formatDateParam, parseJSONEachRow, placeholderTypes, toJSONEachRow } from "./params.js";

describe("placeholderTypes", () => {
  it("reads each {name:Type}, nested parentheses included", () => {
    const types = placeholderTypes(
      "SELECT {a:String}, { b : Map(String, UInt32) }, {t:DateTime64(3, 'UTC')}",
    );
    expect([...types]).toEqual([
      ["a", "String"],
      ["b", "Map(String, UInt32)"],
      ["t", "DateTime64(3, 'UTC')"],
    ]);
  });
});

describe("formatDateParam", () => {
  const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 67));

  it("spells Unix seconds with milliseconds for DateTime64, whole seconds for DateTime", () => {
    expect(formatDateParam(at, "DateTime64(3)", "t")).toBe("1704164645.067");
    expect(formatDateParam(at, "Nullable(DateTime64(6))", "t")).toBe("1704164645.067");
    expect(formatDateParam(at, "DateTime", "t")).toBe("1704164645");
    expect(formatDateParam(at, "DateTime('UTC')", "t")).toBe("1704164645");
  });

  it("spells the UTC day for Date and Date32", () => {
    expect(formatDateParam(at, "Date", "d")).toBe("2024-01-02");
    expect(formatDateParam(at, "LowCardinality(Nullable(Date32))", "d")).toBe("2024-01-02");
  });

  it("refuses Dates before 1970, which Unix seconds cannot spell reliably", () => {
    expect(() => formatDateParam(new Date(-1), "DateTime64(3)", "t")).toThrow(/before 1970/);
  });

  it("refuses invalid Dates and non-date placeholders", () => {
    expect(() => formatDateParam(new Date(Number.NaN), "DateTime", "t")).toThrow(/invalid Date/);
    expect(() => formatDateParam(at, "String", "s")).toThrow(/declare it DateTime/);
    expect(() => formatDateParam(at, undefined, "s")).toThrow(/declare it DateTime/);
  });
});

describe("bindParams", () => {
  it("rewrites only Dates and passes everything else through", () => {
    const bound = bindParams("SELECT {t:DateTime}, {n:UInt64}, {ids:Array(String)}", {
      t: new Date(1_000),
      n: 2n ** 64n - 1n,
      ids: ["a"],
    });
    expect(bound).toEqual({ t: "1", n: 2n ** 64n - 1n, ids: ["a"] });
  });

  it("refuses Dates nested in a collection", () => {
    expect(() => bindParams("SELECT {ts:Array(DateTime)}", { ts: [new Date()] })).toThrow(
      /inside a collection/,
    );
  });
});

describe("JSONEachRow", () => {
  it("serialises bigint as a string and Date as ISO, one row per line", () => {
    const payload = toJSONEachRow([{ big: 2n ** 63n, at: new Date(0) }, { s: "a\nb" }]);
    expect(payload).toBe('{"big":"9223372036854775808","at":"1970-01-01T00:00:00.000Z"}\n{"s":"a\\nb"}\n');
    expect(parseJSONEachRow(payload)).toEqual([
      { big: "9223372036854775808", at: "1970-01-01T00:00:00.000Z" },
      { s: "a\nb" },
    ]);
    expect(toJSONEachRow([])).toBe("");
  });
});

describe("splitStatements", () => {
  it("splits on a `;` that ends a line, keeps mid-line ones, drops comment-only chunks", () => {
    const sql =
      "-- header\nCREATE TABLE a (s String DEFAULT 'x;y');\n\nALTER TABLE a ADD COLUMN b UInt8;  \r\n-- trailing\n";
    expect(splitStatements(sql)).toEqual([
      "-- header\nCREATE TABLE a (s String DEFAULT 'x;y')",
      "ALTER TABLE a ADD COLUMN b UInt8",
    ]);
  });

  it("accepts a last statement without a terminating `;`", () => {
    expect(splitStatements("SELECT 1;\nSELECT 2")).toEqual(["SELECT 1", "SELECT 2"]);
  });
});
