import { DEFAULT_ROUTING } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { routingBody, routingDraft, routingSummary, validateRouting } from "./routing";

describe("routingBody", () => {
  it("sends nothing for the defaults, so the policy is stored without routing", () => {
    expect(routingBody(routingDraft(undefined), ["a", "b"])).toBeUndefined();
    expect(routingBody(routingDraft(DEFAULT_ROUTING), ["a"])).toBeUndefined();
  });

  it("sends a weight for every granted provider when weighted (1 unless typed), none for others", () => {
    const draft = { ...routingDraft(undefined), strategy: "weighted" as const, weights: { a: 3, gone: 5 } };
    expect(routingBody(draft, ["a", "b"])).toEqual({
      ...DEFAULT_ROUTING,
      strategy: "weighted",
      weights: { a: 3, b: 1 },
    });
  });

  it("drops weights with another strategy and sends the budget in milliseconds", () => {
    const draft = {
      ...routingDraft(undefined),
      weights: { a: 3 },
      retries_enabled: false,
      budget_seconds: 1.5,
    };
    expect(routingBody(draft, ["a"])).toEqual({
      ...DEFAULT_ROUTING,
      retries_enabled: false,
      budget_ms: 1_500,
    });
  });
});

describe("validateRouting", () => {
  it("accepts the defaults and names each field out of the API's bounds by its path", () => {
    expect(validateRouting(routingDraft(undefined), ["a"])).toEqual({});
    const draft = {
      strategy: "weighted" as const,
      weights: { a: -1, b: 2.5 },
      retries_enabled: true,
      max_attempts: 6,
      budget_seconds: 0.5,
    };
    expect(Object.keys(validateRouting(draft, ["a", "b", "c"])).sort()).toEqual([
      "routing.budget_ms",
      "routing.max_attempts",
      "routing.weights.a",
      "routing.weights.b",
    ]);
  });
});

describe("routingSummary", () => {
  it("says nothing for a policy on the defaults and names what differs otherwise", () => {
    expect(routingSummary(undefined, ["a"])).toBe("");
    expect(routingSummary(DEFAULT_ROUTING, ["a"])).toBe("");
    expect(
      routingSummary({ ...DEFAULT_ROUTING, strategy: "weighted", weights: { b: 1, a: 3 } }, ["a", "b"]),
    ).toBe("weighted 3:1");
    expect(
      routingSummary({ ...DEFAULT_ROUTING, strategy: "least_busy", retries_enabled: false }, ["a"]),
    ).toBe("least busy, no retries");
  });
});
