import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { unpricedModels } from "./unpriced";

const entry = (overrides: Partial<AccessLogEntry>) =>
  ({
    resolved_provider_id: "p1",
    provider: "Claude",
    model: "claude-opus-5-5",
    decision: "allow",
    deny_reason: "",
    cost_usd: 0,
    total_tokens: 120,
    ...overrides,
  }) as AccessLogEntry;

describe("unpricedModels", () => {
  it("lists models served at $0 or refused for lack of a price, once per provider and model", () => {
    const providers = [
      { id: "p1", name: "Claude", models: [{ id: "priced-at-zero" }] },
    ] as unknown as Provider[];
    const models = unpricedModels(
      [
        entry({}),
        entry({ decision: "deny", deny_reason: "pricing.unknown_model", total_tokens: 0 }),
        entry({ model: "claude-opus-4-5", cost_usd: 0.01 }),
        entry({ model: "failed-before-tokens", total_tokens: 0 }),
        entry({ model: "priced-at-zero" }),
        entry({
          decision: "deny",
          deny_reason: "llm_policy.no_matching_policy",
          model: "other",
          total_tokens: 0,
        }),
      ],
      providers,
    );
    expect(models).toEqual([
      { providerId: "p1", providerName: "Claude", model: "claude-opus-5-5", requests: 2 },
    ]);
  });
});
