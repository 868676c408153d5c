import type { RequestAttempt } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { attemptOutcome, attemptsSummary, ordinal } from "./attempts";

const attempt = (overrides: Partial<RequestAttempt>): RequestAttempt => ({
  provider_id: "prov_a",
  provider: "anthropic",
  model: "claude-sonnet-4-6",
  status: 200,
  error: "",
  duration_ms: 100,
  ...overrides,
});

describe("a request's attempts in words", () => {
  it("says which attempt answered", () => {
    expect(attemptsSummary([attempt({ status: 529 }), attempt({})])).toBe("Answered on the 2nd attempt");
    expect(
      attemptsSummary([attempt({ status: 0, error: "timeout" }), attempt({ status: 503 }), attempt({})]),
    ).toBe("Answered on the 3rd attempt");
  });

  it("says when every attempt failed, a status of 400 or more as much as no status", () => {
    expect(attemptsSummary([attempt({ status: 529 }), attempt({ status: 0, error: "connect_failed" })])).toBe(
      "All 2 attempts failed",
    );
    expect(attemptsSummary([attempt({ status: 529 }), attempt({ status: 400 })])).toBe(
      "All 2 attempts failed",
    );
    expect(attemptsSummary([])).toBe("");
  });

  it("gives the vendor's status, or why none came", () => {
    expect(attemptOutcome(attempt({ status: 529 }))).toBe("529");
    expect(attemptOutcome(attempt({ status: 529, error: "overloaded_error" }))).toBe(
      "529 (overloaded_error)",
    );
    expect(attemptOutcome(attempt({ status: 0, error: "connect_failed" }))).toBe("could not connect");
    expect(attemptOutcome(attempt({ status: 0, error: "stream_failed_before_first_byte" }))).toBe(
      "stream failed before its first byte",
    );
    expect(attemptOutcome(attempt({ status: 0, error: "tls_failed" }))).toBe("tls_failed");
  });

  it("counts in English ordinals", () => {
    expect([1, 2, 3, 4, 5, 11, 12, 13, 21].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "5th",
      "11th",
      "12th",
      "13th",
      "21st",
    ]);
  });
});
