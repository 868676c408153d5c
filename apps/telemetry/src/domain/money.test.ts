import { describe, expect, it } from "vitest";
import { usdToDecimal } from "./money";

describe("usdToDecimal", () => {
  it("spells the exact nano-USD decimal of the number", () => {
    expect(usdToDecimal(0)).toBe("0.000000000");
    expect(usdToDecimal(0.000000001)).toBe("0.000000001");
    expect(usdToDecimal(0.1 + 0.2)).toBe("0.300000000");
    expect(usdToDecimal(1234.5)).toBe("1234.500000000");
    expect(usdToDecimal(1.5e-7)).toBe("0.000000150");
  });
});
