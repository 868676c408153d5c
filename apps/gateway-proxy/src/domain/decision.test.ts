import type { GatewayProvider, Guardrail, Policy } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { makeGuardrail, makePolicy, makeProvider } from "../test-support/factories";
import type { Wire } from "../wires";
import { anthropic as anthropicWire } from "../wires/anthropic";
import { bedrockConverse, bedrockInvoke } from "../wires/bedrock";
import { openai as openAiWire } from "../wires/openai";
import { type DecisionInput, Decisions, decide, splitExplicitProvider } from "./decision";

const openai = makeProvider();
const anthropic = makeProvider({
  id: "prov_anthropic",
  provider_id: "anthropic_api",
  name: "Claude",
  upstream_url: "https://api.anthropic.com",
});
const local = makeProvider({
  id: "prov_local",
  provider_id: "custom",
  name: "Local",
  models: [{ id: "llama-3", input_per_1k: 0.001, output_per_1k: 0.002 }],
});

const input = (overrides: {
  providers?: GatewayProvider[];
  policies?: Policy[];
  guardrails?: Guardrail[];
  model?: string;
  wire?: Wire;
}): DecisionInput => ({
  providers: overrides.providers ?? [openai, anthropic, local],
  policies: overrides.policies ?? [
    makePolicy({ destination_provider_ids: ["prov_local", "prov_openai", "prov_anthropic"] }),
  ],
  guardrails: new Map((overrides.guardrails ?? []).map((g) => [g.id, g])),
  groupIds: ["grp_all", "grp_eng"],
  requestedModel: overrides.model ?? "gpt-4o",
  wire: overrides.wire ?? openAiWire,
});

const allowlist = (id: string, models: string[]) =>
  makeGuardrail({
    id,
    checks: {
      model_allowlist: { enabled: true, models },
      prompt_capture: { enabled: false, redact_pii: false },
    },
  });

describe("decide", () => {
  it("picks the first reachable provider that knows the model", () => {
    const decision = decide(input({ model: "gpt-4o" }));
    expect(decision).toMatchObject({ decision: "allow", model: "gpt-4o" });
    expect(decision.decision === "allow" && decision.provider.id).toBe("prov_openai");
    const llama = decide(input({ model: "llama-3" }));
    expect(llama.decision === "allow" && llama.provider.id).toBe("prov_local");
  });

  it("routes /v1/messages only to anthropic-flavored providers", () => {
    const decision = decide(input({ model: "claude-sonnet-4-5", wire: anthropicWire }));
    expect(decision.decision === "allow" && decision.provider.id).toBe("prov_anthropic");
  });

  it("falls back to the first fitting provider for a model nobody lists", () => {
    const decision = decide(input({ model: "brand-new-model", providers: [anthropic, openai] }));
    expect(decision.decision === "allow" && decision.provider.id).toBe("prov_openai");
  });

  it("honours provider-name/model, case-insensitively", () => {
    const decision = decide(input({ model: "openai/gpt-4o-mini" }));
    expect(decision).toMatchObject({ decision: "allow", model: "gpt-4o-mini" });
    expect(decision.decision === "allow" && decision.provider.id).toBe("prov_openai");
    expect(splitExplicitProvider([local], "meta-llama/Llama-3")).toBeUndefined();
  });

  it("denies without a covering policy", () => {
    const decision = decide(input({ policies: [makePolicy({ source_groups: ["grp_ops"] })] }));
    expect(decision).toMatchObject({ decision: "deny", reason: "llm_policy.no_matching_policy" });
  });

  it("says provider.disabled when the only matching provider is disabled", () => {
    const decision = decide(input({ providers: [{ ...openai, enabled: false }], policies: [makePolicy()] }));
    expect(decision).toMatchObject({ decision: "deny", reason: "provider.disabled" });
  });

  it("denies a model outside the allowlist, and accepts a dated alias of an allowed one", () => {
    const policies = [makePolicy({ guardrail_ids: ["g"] })];
    const guardrails = [allowlist("g", ["gpt-4o"])];
    expect(decide(input({ providers: [openai], policies, guardrails, model: "o3" }))).toMatchObject({
      decision: "deny",
      reason: "guardrail.model_not_allowed",
      policy: { id: "pol_1" },
    });
    expect(
      decide(input({ providers: [openai], policies, guardrails, model: "gpt-4o-2024-08-06" })),
    ).toMatchObject({ decision: "allow" });
  });

  it("denies a model the provider does not declare", () => {
    const decision = decide(
      input({
        providers: [local],
        policies: [makePolicy({ destination_provider_ids: ["prov_local"] })],
        model: "local/gpt-x",
      }),
    );
    expect(decision).toMatchObject({ decision: "deny", reason: "guardrail.model_not_allowed" });
  });

  it("the authorising policy is the first granting one that lets the model through", () => {
    const policies = [
      makePolicy({ id: "strict", guardrail_ids: ["g"] }),
      makePolicy({ id: "open", source_groups: ["grp_all"] }),
    ];
    const decision = decide(
      input({ providers: [openai], policies, guardrails: [allowlist("g", ["gpt-4o"])], model: "o3" }),
    );
    expect(decision.decision === "allow" && decision.policy.id).toBe("open");
  });

  it("refuses an explicit provider of the wrong flavor for the route", () => {
    expect(decide(input({ model: "claude/claude-sonnet-4-5" }))).toMatchObject({
      decision: "deny",
      reason: "gateway.flavor_mismatch",
    });
  });
});

describe("decide: candidates", () => {
  const second = makeProvider({ id: "prov_openai_eu", name: "OpenAI EU" });
  const routes = (decision: ReturnType<typeof decide>) =>
    decision.decision === "allow" ? decision.candidates.map((route) => route.provider.id) : [];

  it("lists every fitting provider that serves the model, in policy order, the chosen one first", () => {
    const policies = [
      makePolicy({ destination_provider_ids: ["prov_local", "prov_openai", "prov_openai_eu"] }),
    ];
    const decision = decide(input({ providers: [openai, second, local], policies }));
    expect(routes(decision)).toEqual(["prov_openai", "prov_openai_eu"]);
  });

  it("leaves out providers whose policies' allowlists refuse the model", () => {
    const policies = [
      makePolicy({ id: "open", destination_provider_ids: ["prov_openai"] }),
      makePolicy({ id: "strict", destination_provider_ids: ["prov_openai_eu"], guardrail_ids: ["g"] }),
    ];
    const decision = decide(
      input({ providers: [openai, second], policies, guardrails: [allowlist("g", ["o3"])] }),
    );
    expect(routes(decision)).toEqual(["prov_openai"]);
  });

  it("an explicitly named provider is the only candidate", () => {
    const policies = [makePolicy({ destination_provider_ids: ["prov_openai", "prov_openai_eu"] })];
    const decision = decide(input({ providers: [openai, second], policies, model: "OpenAI EU/gpt-4o" }));
    expect(routes(decision)).toEqual(["prov_openai_eu"]);
  });

  it("a provider chosen without knowing the model is the only candidate", () => {
    const decision = decide(input({ model: "brand-new-model", providers: [anthropic, openai, second] }));
    expect(routes(decision)).toEqual(["prov_openai"]);
  });

  it("routing is the authorising policy's, the default (priority, retries on) without one", () => {
    const plain = decide(input({}));
    expect(plain).toMatchObject({ routing: { strategy: "priority", retries_enabled: true } });
    const weighted = decide(
      input({
        policies: [
          makePolicy({
            routing: {
              strategy: "weighted",
              weights: {},
              retries_enabled: false,
              max_attempts: 1,
              budget_ms: 5_000,
            },
          }),
        ],
      }),
    );
    expect(weighted).toMatchObject({ routing: { strategy: "weighted", retries_enabled: false } });
  });
});

describe("Decisions", () => {
  it("decides once per wire, model and groups, and never answers one wire with another's decision", () => {
    const onlyAnthropic = input({ providers: [anthropic] });
    const decisions = new Decisions(onlyAnthropic);
    const claude = "claude-sonnet-4-5";
    const groups = onlyAnthropic.groupIds;
    // Bedrock's Invoke and Converse share a name; only Invoke fits an Anthropic-flavored provider.
    const invoke = decisions.of(bedrockInvoke, claude, groups);
    expect(invoke.decision === "allow" && invoke.provider.id).toBe("prov_anthropic");
    const converse = decisions.of(bedrockConverse, claude, groups);
    expect(converse).toEqual(decide(input({ providers: [anthropic], model: claude, wire: bedrockConverse })));
    expect(converse.decision).toBe("deny");

    expect(decisions.of(bedrockInvoke, claude, groups)).toBe(invoke);
    expect(decisions.of(bedrockInvoke, claude, ["grp_ops"])).not.toBe(invoke);
  });

  it("starts over once a wire holds its most, deciding again what it dropped", () => {
    const config = input({});
    const decisions = new Decisions(config, 2);
    const decideFor = (model: string) => decisions.of(openAiWire, model, config.groupIds);
    const first = decideFor("gpt-4o");
    decideFor("gpt-4o-mini");
    expect(decideFor("gpt-4o")).toBe(first);
    decideFor("llama-3");
    const again = decideFor("gpt-4o");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
