import { describe, expect, it } from "vitest";
import { bounded, identifierProblem, requestShapeProblem } from "./request-shape";

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

describe("request identifiers", () => {
  it("accepts a vendor model id and a session UUID", () => {
    expect(
      identifierProblem("claude-sonnet-4-5-20250929", "9f0c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"),
    ).toBeUndefined();
    expect(identifierProblem("m".repeat(256), "s".repeat(256))).toBeUndefined();
  });

  it("refuses a model over 256 characters or holding control characters, and a session id over 256", () => {
    expect(identifierProblem("m".repeat(1_100_000), "")).toBe("model must be at most 256 characters");
    expect(identifierProblem("gpt\u202E4o", "")).toBe(
      "model must not contain bidirectional control characters (U+202E)",
    );
    expect(identifierProblem("gpt-4o", "s".repeat(1_000_000))).toBe(
      "the session id must be at most 256 characters",
    );
  });

  it("cuts a value for a row to the bound, marked, never between the halves of a pair", () => {
    expect(bounded("short", 256)).toBe("short");
    expect(bounded("m".repeat(1_000), 256)).toBe(`${"m".repeat(255)}…`);
    const cut = bounded(`${"m".repeat(254)}😀tail`, 256);
    expect(cut).toBe(`${"m".repeat(254)}…`);
  });
});
