import { describe, expect, it } from "vitest";
import { decimalToScaled, nanosToUsd, rateToPicosPer1k, tokenCostNanos, usdToNanos } from "./money";

describe("usdToNanos", () => {
  it("converts from the decimal text, not by float multiplication", () => {
    // 0.00015 * 1e9 is 150000.00000000003 as a double.
    expect(usdToNanos(0.00015)).toBe(150_000);
    expect(usdToNanos(0.1 + 0.2)).toBe(300_000_000);
    expect(usdToNanos(1.05)).toBe(1_050_000_000);
    expect(usdToNanos(0)).toBe(0);
  });

  it("handles exponent notation and rounds half away from zero", () => {
    expect(usdToNanos(1.5e-7)).toBe(150);
    expect(usdToNanos(1e-10)).toBe(0);
    expect(usdToNanos(5e-10)).toBe(1);
    expect(usdToNanos(-5e-10)).toBe(-1);
    expect(usdToNanos(-2.5)).toBe(-2_500_000_000);
    expect(usdToNanos(1e6)).toBe(1_000_000_000_000_000);
  });

  it("agrees with the exact decimal conversion for plain and long decimals alike", () => {
    for (const usd of [
      0.05,
      123.456789012,
      9_007_199.254740991,
      0.000000001,
      42,
      1e-9,
      0.1 + 0.7,
      3.3333333333,
    ]) {
      expect(usdToNanos(usd)).toBe(Number(decimalToScaled(usd, 9)));
    }
  });

  it("refuses amounts a number cannot hold exactly as nanos", () => {
    expect(() => usdToNanos(1e7)).toThrow(RangeError);
    expect(() => usdToNanos(Number.NaN)).toThrow(RangeError);
    expect(() => usdToNanos(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe("nanosToUsd", () => {
  it("round-trips with usdToNanos", () => {
    for (const usd of [0, 0.000000001, 0.0025, 0.075, 1.05, 12.345678901, 9_000_000]) {
      expect(nanosToUsd(usdToNanos(usd))).toBe(usd);
    }
  });

  it("accepts bigint nanos", () => {
    expect(nanosToUsd(1_050_000_000n)).toBe(1.05);
  });
});

describe("rates", () => {
  it("keeps sub-nano per-1k rates exactly (pico-USD per 1k)", () => {
    // $0.0025 per million tokens = 0.0000025 per 1k = 2,500,000 pico-USD per 1k.
    expect(rateToPicosPer1k(0.0000025)).toBe(2_500_000n);
    expect(rateToPicosPer1k(0.015)).toBe(15_000_000_000n);
    expect(decimalToScaled(0.000075, 12)).toBe(75_000_000n);
  });

  it("refuses a negative rate, every time it is asked", () => {
    expect(() => rateToPicosPer1k(-0.001)).toThrow(RangeError);
    expect(() => rateToPicosPer1k(-0.001)).toThrow(RangeError);
  });

  it("converts a rate it has seen before to the same amount", () => {
    expect(rateToPicosPer1k(0.00015)).toBe(150_000_000n);
    expect(rateToPicosPer1k(0.00015)).toBe(150_000_000n);
    expect(rateToPicosPer1k(1.5e-7)).toBe(150_000n);
  });

  it("rounds a token cost to the nano once, half up", () => {
    // $0.0015 per million tokens: 1 token = 1.5 nano → 2; 3 tokens = 4.5 → 5.
    expect(tokenCostNanos(1, rateToPicosPer1k(0.0000015))).toBe(2n);
    expect(tokenCostNanos(3, rateToPicosPer1k(0.0000015))).toBe(5n);
    expect(tokenCostNanos(0, rateToPicosPer1k(0.0000015))).toBe(0n);
    expect(tokenCostNanos(1_000, rateToPicosPer1k(0.0015))).toBe(1_500_000n);
  });
});
