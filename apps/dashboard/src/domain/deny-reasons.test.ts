import { describe, expect, it } from "vitest";
import { decisionText, denyReasonText } from "./deny-reasons";

describe("deny reasons in words", () => {
  it("words every cap reason the consumption service returns", () => {
    expect(denyReasonText("llm_policy.token_cap_exceeded")).toBe(
      "The policy's token cap for this window was reached",
    );
    expect(denyReasonText("budget_rule.budget_cap_exceeded")).toContain("budget rule's spending cap");
    expect(denyReasonText("guardrail.model_not_allowed")).toContain("allowlist");
  });

  it("spells out an unknown code and keeps the code", () => {
    expect(denyReasonText("gateway.upstream_timeout")).toBe("Upstream timeout (gateway.upstream_timeout)");
    expect(denyReasonText("")).toBe("");
  });

  it("puts decision and reason together", () => {
    expect(decisionText("allow", "")).toBe("Allowed");
    expect(decisionText("deny", "provider.disabled")).toBe(
      "Denied: The provider for this request is disabled",
    );
    expect(decisionText("deny", "")).toBe("Denied");
  });
});
