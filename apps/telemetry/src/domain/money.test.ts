import { describe, expect, it } from "vitest";
import { usdToDecimal, usdToDecimalText } from "./money";

describe("usdToDecimal", () => {
  it("spells the exact nano-USD decimal of the number", () => {
    expect(usdToDecimal(0)).toBe("0.000000000");
    expect(usdToDecimal(0.000000001)).toBe("0.000000001");
    expect(usdToDecimal(0.1 + 0.2)).toBe("0.300000000");
    expect(usdToDecimal(1234.5)).toBe("1234.500000000");
    expect(usdToDecimal(1.5e-7)).toBe("0.000000150");
  });
});

describe("usdToDecimalText", () => {
  it("is the same amount as usdToDecimal, rounding only when the text has more than 9 decimals", () => {
    for (const usd of [0, 0.000000001, 0.00075, 1234.5, 1.5e-7, 0.1 + 0.2, 0.0000000015, -0.25]) {
      const fast = usdToDecimalText(usd);
      expect(Number(fast)).toBe(Number(usdToDecimal(usd)));
      expect(fast).not.toMatch(/e/);
    }
    expect(usdToDecimalText(0.00075)).toBe("0.00075");
    expect(usdToDecimalText(1.5e-7)).toBe("0.000000150");
    expect(usdToDecimalText(0.0000000015)).toBe("0.000000002");
  });
});
