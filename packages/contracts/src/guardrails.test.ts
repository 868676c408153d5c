import { describe, expect, it } from "vitest";
import { Guardrail, GuardrailBody, type GuardrailChecks } from "./guardrails";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeChecks = (): GuardrailChecks => ({
  model_allowlist: { enabled: true, models: ["gpt-4o-mini"] },
  prompt_capture: { enabled: false, redact_pii: false },
});

const makeGuardrailBody = (overrides: Record<string, unknown> = {}) => ({
  name: "Cheap models only",
  checks: makeChecks(),
  ...overrides,
});

describe("Guardrail", () => {
  it("parses a stored guardrail", () => {
    const guardrail = {
      id: "gr-1",
      description: "",
      ...makeGuardrailBody(),
      created_at: "2025-01-01T00:00:00Z",
      updated_at: "2025-01-01T00:00:00Z",
    };
    expect(Guardrail.parse(guardrail)).toEqual(guardrail);
  });
});

describe("GuardrailBody", () => {
  it("defaults description to empty", () => {
    expect(GuardrailBody.parse(makeGuardrailBody())).toEqual({ ...makeGuardrailBody(), description: "" });
  });

  it("keeps a description", () => {
    expect(GuardrailBody.parse(makeGuardrailBody({ description: "why" })).description).toBe("why");
  });

  it("accepts an enabled allowlist with no models (denies every model)", () => {
    const checks = { ...makeChecks(), model_allowlist: { enabled: true, models: [] } };
    expect(GuardrailBody.safeParse(makeGuardrailBody({ checks })).success).toBe(true);
  });

  it.each(["name", "checks"])("requires %s", (field) => {
    const { [field as "name"]: _dropped, ...rest } = makeGuardrailBody();
    expect(issuePaths(GuardrailBody.safeParse(rest))).toEqual([field]);
  });

  it("rejects a blank name", () => {
    expect(issuePaths(GuardrailBody.safeParse(makeGuardrailBody({ name: "" })))).toEqual(["name"]);
  });

  it.each(["model_allowlist", "prompt_capture"] as const)("requires checks.%s", (member) => {
    const { [member]: _dropped, ...rest } = makeChecks();
    expect(issuePaths(GuardrailBody.safeParse(makeGuardrailBody({ checks: rest })))).toEqual([
      `checks.${member}`,
    ]);
  });

  it.each([
    ["model_allowlist", "enabled"],
    ["model_allowlist", "models"],
    ["prompt_capture", "enabled"],
    ["prompt_capture", "redact_pii"],
  ] as const)("requires checks.%s.%s", (member, field) => {
    const checks: Record<string, Record<string, unknown>> = {
      model_allowlist: { ...makeChecks().model_allowlist },
      prompt_capture: { ...makeChecks().prompt_capture },
    };
    delete checks[member]?.[field];
    expect(issuePaths(GuardrailBody.safeParse(makeGuardrailBody({ checks })))).toEqual([
      `checks.${member}.${field}`,
    ]);
  });

  it("rejects an empty model id in the allowlist", () => {
    const checks = { ...makeChecks(), model_allowlist: { enabled: true, models: [""] } };
    expect(issuePaths(GuardrailBody.safeParse(makeGuardrailBody({ checks })))).toEqual([
      "checks.model_allowlist.models.0",
    ]);
  });
});
