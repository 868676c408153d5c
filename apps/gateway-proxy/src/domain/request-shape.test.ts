import { describe, expect, it } from "vitest";
import { requestShapeProblem } from "./request-shape";

const nested = (levels: number) => {
  let value: unknown = "x";
  for (let i = 0; i < levels; i++) value = { content: [value] };
  return value;
};

describe("request shape", () => {
  it("accepts ordinary requests, agents' large output caps included", () => {
    expect(requestShapeProblem({ model: "m", messages: [{ role: "user", content: "hi" }] })).toBeUndefined();
    expect(requestShapeProblem({ model: "m", max_tokens: 128_000, metadata: nested(20) })).toBeUndefined();
  });

  it.each([1e308, Number.NaN, -1, 0, 1.5, "100", 100_000_001])("refuses max_tokens %s", (value) => {
    expect(requestShapeProblem({ model: "m", max_tokens: value })).toMatch(/max_tokens must be an integer/);
  });

  it("refuses a body nested 10,000 levels deep without overflowing the stack", () => {
    expect(requestShapeProblem({ model: "m", messages: [nested(10_000)] })).toMatch(/nests deeper than 64/);
  });
});
