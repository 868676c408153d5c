import { describe, expect, it } from "vitest";
import { windowInWords } from "./format";

describe("windowInWords", () => {
  it("names the preset windows and gives other lengths in units", () => {
    expect(windowInWords(3_600)).toBe("hour");
    expect(windowInWords(2_592_000)).toBe("30 days");
    expect(windowInWords(5_400)).toBe("90 min");
    expect(windowInWords(45)).toBe("45 s");
  });
});
