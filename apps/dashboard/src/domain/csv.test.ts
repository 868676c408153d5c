import { describe, expect, it } from "vitest";
import { csvField, toCsv } from "./csv";

describe("CSV (RFC 4180)", () => {
  it("leaves plain fields bare and writes numbers, booleans and blanks as text", () => {
    expect(csvField("gpt-4o-mini")).toBe("gpt-4o-mini");
    expect(csvField(0.000123)).toBe("0.000123");
    expect(csvField(false)).toBe("false");
    expect(csvField(undefined)).toBe("");
  });

  it("quotes fields with commas, quotes and line breaks, doubling the quotes", () => {
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("line one\nline two")).toBe('"line one\nline two"');
    expect(csvField("cr\rlf")).toBe('"cr\rlf"');
  });

  it("keeps a spreadsheet from running a cell as a formula", () => {
    expect(csvField('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvField("+1")).toBe("'+1");
    expect(csvField("@sum")).toBe("'@sum");
    expect(csvField(-1)).toBe("-1");
  });

  it("writes a header record and one CRLF-ended record per row", () => {
    expect(
      toCsv(
        ["id", "note"],
        [
          ["a", "plain"],
          ["b", "x, y"],
        ],
      ),
    ).toBe('id,note\r\na,plain\r\nb,"x, y"\r\n');
    expect(toCsv(["id"], [])).toBe("id\r\n");
  });
});
