import { describe, expect, it } from "vitest";
import {
  formatDate,
  formatDateTime,
  formatHourMinute,
  formatRange,
  formatShortDate,
  formatTimeOfDay,
  formatUsd,
  plural,
  windowInWords,
} from "./format";

describe("windowInWords", () => {
  it("names the preset windows and gives other lengths in units", () => {
    expect(windowInWords(3_600)).toBe("hour");
    expect(windowInWords(2_592_000)).toBe("30 days");
    expect(windowInWords(5_400)).toBe("90 min");
    expect(windowInWords(45)).toBe("45 s");
  });
});

describe("formatUsd", () => {
  it("shows a dollar and more with cents", () => {
    expect(formatUsd(1)).toBe("$1.00");
    expect(formatUsd(12.345)).toBe("$12.35");
    expect(formatUsd(1234.5)).toBe("$1,234.50");
  });

  it("shows less than a dollar with two significant digits and at least two decimals", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(0.5)).toBe("$0.50");
    expect(formatUsd(0.1234)).toBe("$0.12");
    expect(formatUsd(0.01234)).toBe("$0.012");
    expect(formatUsd(0.0012)).toBe("$0.0012");
    expect(formatUsd(0.00001234)).toBe("$0.000012");
  });

  it("never shows a positive cost as $0.00 and puts the sign before the dollar", () => {
    expect(formatUsd(0.000_000_4)).toBe("<$0.000001");
    expect(formatUsd(-0.5)).toBe("-$0.50");
  });
});

describe("formatDateTime and formatDate", () => {
  // Built from local fields: the browser shows times in its own zone, and so does this test.
  const local = new Date(2025, 2, 5, 14, 3, 22).toISOString();

  it("writes the month in words with a 24-hour clock", () => {
    expect(formatDateTime(local)).toBe("5 Mar 2025, 14:03:22");
    expect(formatDate(local)).toBe("5 Mar 2025");
  });

  it("shows text that is not a date as it came", () => {
    expect(formatDateTime("not a date")).toBe("not a date");
    expect(formatDate("")).toBe("");
  });
});

describe("the parts of a timestamp", () => {
  // Local fields, as above: the labels are in the reader's zone.
  const afternoon = new Date(2025, 2, 5, 14, 3, 22);
  const earlyMorning = new Date(2025, 2, 6, 0, 5, 9);

  it("labels a day without its year", () => {
    expect(formatShortDate(afternoon)).toBe("5 Mar");
  });

  it("labels a time of day on a 24-hour clock, to the minute or the second", () => {
    expect(formatHourMinute(afternoon)).toBe("14:03");
    expect(formatTimeOfDay(afternoon)).toBe("14:03:22");
    expect(formatHourMinute(earlyMorning)).toBe("00:05");
    expect(formatTimeOfDay(earlyMorning)).toBe("00:05:09");
  });

  it("writes a range as its two ends to the minute, like formatDateTime", () => {
    expect(formatRange(afternoon, earlyMorning)).toBe("5 Mar 2025, 14:03 to 6 Mar 2025, 00:05");
  });
});

describe("plural", () => {
  it("turns a consonant and y into ies and adds s otherwise", () => {
    expect(plural("policy")).toBe("policies");
    expect(plural("budget rule")).toBe("budget rules");
    expect(plural("guardrail")).toBe("guardrails");
    expect(plural("key")).toBe("keys");
  });
});
