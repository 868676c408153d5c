import type { Guardrail, Policy, Provider } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { coveringPolicies, isModelAllowed, modelAllowance, reachableProviders } from "./index";

const makePolicy = (overrides: Partial<Policy> = {}): Policy => ({
  id: "pol",
  name: "p",
  description: "",
  enabled: true,
  source_groups: ["eng"],
  destination_provider_ids: ["openai"],
  guardrail_ids: [],
  mcp_servers: [],
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  ...overrides,
});

const makeGuardrail = (id: string, models: string[], enabled = true): Guardrail => ({
  id,
  name: id,
  description: "",
  checks: { model_allowlist: { enabled, models }, prompt_capture: { enabled: false, redact_pii: false } },
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
});

const makeProvider = (overrides: Partial<Provider> = {}): Pick<Provider, "id" | "enabled" | "models"> => ({
  id: "openai",
  enabled: true,
  models: [],
  ...overrides,
});

const guardrails = (...list: Guardrail[]) => new Map(list.map((g) => [g.id, g]));

describe("coveringPolicies", () => {
  it("keeps enabled policies sharing a source group with the caller", () => {
    const policies = [
      makePolicy({ id: "a" }),
      makePolicy({ id: "b", enabled: false }),
      makePolicy({ id: "c", source_groups: ["ops"] }),
    ];
    expect(coveringPolicies(policies, ["eng"]).map((p) => p.id)).toEqual(["a"]);
  });
});

describe("reachableProviders", () => {
  it("skips disabled providers and groups the granting policies", () => {
    const providers = [makeProvider(), makeProvider({ id: "off", enabled: false })];
    const policies = [
      makePolicy({ id: "a", destination_provider_ids: ["openai", "off"] }),
      makePolicy({ id: "b", destination_provider_ids: ["openai"] }),
    ];
    const grants = reachableProviders(providers, policies, ["eng"]);
    expect(grants.map((g) => [g.provider.id, g.policies.map((p) => p.id)])).toEqual([["openai", ["a", "b"]]]);
  });
});

describe("modelAllowance", () => {
  it("allows everything without allowlists or declared models", () => {
    expect(modelAllowance(makeProvider(), [makePolicy()], guardrails())).toEqual({ all: true });
  });

  it("limits to the declared models when the provider lists some", () => {
    const allowance = modelAllowance(
      makeProvider({ models: [{ id: "gpt-4o", input_per_1k: 1, output_per_1k: 1 }] }),
      [makePolicy()],
      guardrails(),
    );
    expect(isModelAllowed(allowance, "gpt-4o")).toBe(true);
    expect(isModelAllowed(allowance, "o3")).toBe(false);
  });

  it("intersects the enabled allowlists of one policy and ignores disabled ones", () => {
    const policy = makePolicy({ guardrail_ids: ["g1", "g2", "off"] });
    const allowance = modelAllowance(
      makeProvider(),
      [policy],
      guardrails(
        makeGuardrail("g1", ["a", "b"]),
        makeGuardrail("g2", ["b", "c"]),
        makeGuardrail("off", ["z"], false),
      ),
    );
    expect(allowance).toEqual({ all: false, models: new Set(["b"]) });
  });

  it("adds up policies: one unrestricted policy allows all", () => {
    const restricted = makePolicy({ id: "r", guardrail_ids: ["g1"] });
    const g = guardrails(makeGuardrail("g1", ["a"]));
    expect(modelAllowance(makeProvider(), [restricted], g)).toEqual({ all: false, models: new Set(["a"]) });
    expect(modelAllowance(makeProvider(), [restricted, makePolicy()], g)).toEqual({ all: true });
  });

  it("an enabled empty allowlist denies every model", () => {
    const allowance = modelAllowance(
      makeProvider(),
      [makePolicy({ guardrail_ids: ["g"] })],
      guardrails(makeGuardrail("g", [])),
    );
    expect(isModelAllowed(allowance, "gpt-4o")).toBe(false);
  });
});
