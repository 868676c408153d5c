import type { Group, Provider } from "@agentnet/contracts";
import { type Harness, startHarness } from "@agentnet/provider-verifier/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
let vendors: Harness;
beforeAll(async () => {
  vendors = await startHarness({ timeoutMs: 2_000 });
  // The gateway's default body limit (1 MiB), so oversized fields reach the contract, not the parser.
  api = await startApiHarness({ verifier: vendors.endpoints, bodyLimitBytes: 1_048_576 });
});
afterAll(async () => {
  await api.stop();
  await vendors.stop();
});

const providers = "/api/agent-network/providers";
// A custom upstream is stored without a vendor check: these tests are about the body alone.
const makeProviderBody = (overrides: Record<string, unknown> = {}) => ({
  provider_id: "custom",
  name: "Local",
  upstream_url: "http://127.0.0.1:9/v1",
  api_key: "sk-local",
  ...overrides,
});
const model = (overrides: Record<string, unknown> = {}) => ({
  id: "llama-3.3-70b",
  input_per_1k: 0.0006,
  output_per_1k: 0.0006,
  ...overrides,
});
const limits = (budget: Record<string, unknown> = {}) => ({
  token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
  budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 5, window_seconds: 3600, ...budget },
});

async function owner() {
  const { token } = await api.bootstrap();
  const call = <T>(method: string, path: string, body?: unknown) =>
    api.call<T>(method, path, { token, body });
  const [all] = (await call<Group[]>("GET", "/api/groups")).body;
  const provider = await call<Provider>("POST", providers, makeProviderBody());
  expect(provider.status).toBe(200);
  return { call, allGroupId: all?.id ?? "", provider: provider.body };
}

describe("sizes at the API", () => {
  it("refuses a provider model id of 700,000 characters on create and on update, naming the field", async () => {
    const o = await owner();
    const body = makeProviderBody({ models: [model({ id: "m".repeat(700_000) })] });
    for (const [method, path] of [
      ["POST", providers],
      ["PUT", `${providers}/${o.provider.id}`],
    ] as const) {
      const response = await o.call(method, path, body);
      expect(response.status, method).toBe(400);
      expect(response.body).toMatchObject({
        code: 400,
        message: "invalid request: models.0.id: model must be at most 256 characters",
        details: [{ path: "models.0.id", message: "model must be at most 256 characters" }],
      });
    }
  });

  it("refuses rates of 1e308 and 1e12 USD per 1k tokens and accepts the highest, 100", async () => {
    const o = await owner();
    for (const rate of [1e308, 1e12]) {
      const response = await o.call(
        "PUT",
        `${providers}/${o.provider.id}`,
        makeProviderBody({ models: [model({ input_per_1k: rate })] }),
      );
      expect(response.status, String(rate)).toBe(400);
      expect(response.body).toMatchObject({
        details: [{ path: "models.0.input_per_1k", message: "must be at most 100 (USD per 1000 tokens)" }],
      });
    }
    const highest = model({ input_per_1k: 100, output_per_1k: 100 });
    const stored = await o.call<Provider>(
      "PUT",
      `${providers}/${o.provider.id}`,
      makeProviderBody({ models: [highest] }),
    );
    expect(stored).toMatchObject({ status: 200, body: { models: [highest] } });
  });

  it("refuses names holding a right-to-left override on every resource, and accepts other scripts", async () => {
    const o = await owner();
    const spoof = "invoice\u202Efdp.exe";
    const bodies: [string, Record<string, unknown>][] = [
      ["/api/groups", { name: spoof }],
      [providers, makeProviderBody({ name: spoof })],
      [
        "/api/agent-network/policies",
        { name: spoof, source_groups: [o.allGroupId], destination_provider_ids: [o.provider.id] },
      ],
      ["/api/agent-network/budget-rules", { name: spoof, limits: limits() }],
      [
        "/api/agent-network/guardrails",
        {
          name: spoof,
          checks: {
            model_allowlist: { enabled: false, models: [] },
            prompt_capture: { enabled: false, redact_pii: false },
          },
        },
      ],
      ["/api/users", { email: "eve@example.com", name: spoof }],
    ];
    for (const [path, body] of bodies) {
      const response = await o.call("POST", path, body);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toMatchObject({
        details: [
          { path: "name", message: "name must not contain bidirectional control characters (U+202E)" },
        ],
      });
    }
    // A Cyrillic А: look-alikes are allowed (packages/contracts/src/text.ts says why).
    expect((await o.call("POST", "/api/groups", { name: "Аll" })).status).toBe(200);
  });

  it("refuses an allowlist entry over 256 characters, an id list over 1,000 and a USD cap over $5 million", async () => {
    const o = await owner();
    const guardrail = await o.call("POST", "/api/agent-network/guardrails", {
      name: "g",
      checks: {
        model_allowlist: { enabled: true, models: ["x".repeat(257)] },
        prompt_capture: { enabled: false, redact_pii: false },
      },
    });
    expect(guardrail).toMatchObject({
      status: 400,
      body: { details: [{ path: "checks.model_allowlist.models.0" }] },
    });
    const ids = Array.from({ length: 1_001 }, (_, index) => `grp_${index}`);
    const policy = await o.call("POST", "/api/agent-network/policies", {
      name: "p",
      source_groups: ids,
      destination_provider_ids: [o.provider.id],
    });
    expect(policy).toMatchObject({
      status: 400,
      body: { details: [{ path: "source_groups", message: "at most 1000 ids" }] },
    });
    const rule = await o.call("POST", "/api/agent-network/budget-rules", {
      name: "r",
      limits: limits({ user_cap_usd: 1e10 }),
    });
    expect(rule).toMatchObject({
      status: 400,
      body: {
        details: [{ path: "limits.budget_limit.user_cap_usd", message: "must be at most 5000000 USD" }],
      },
    });
  });
});
