import { describe, expect, it } from "vitest";
import type { Limits } from "./limits";
import { Policy, PolicyBody } from "./policies";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeLimits = (): Limits => ({
  token_limit: { enabled: true, group_cap: 1000, user_cap: 100, window_seconds: 60 },
  budget_limit: { enabled: true, group_cap_usd: 10, user_cap_usd: 1, window_seconds: 3600 },
});

const makePolicyBody = (overrides: Record<string, unknown> = {}) => ({
  name: "Engineers to OpenAI",
  source_groups: ["grp-eng"],
  destination_provider_ids: ["prov-openai"],
  ...overrides,
});

const makePolicy = (overrides: Partial<Policy> = {}): Policy => ({
  id: "pol-1",
  name: "Engineers to OpenAI",
  description: "",
  enabled: true,
  source_groups: ["grp-eng"],
  destination_provider_ids: ["prov-openai"],
  guardrail_ids: [],
  mcp_servers: [],
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  ...overrides,
});

describe("Policy", () => {
  it("parses a policy without limits", () => {
    expect(Policy.parse(makePolicy())).toEqual(makePolicy());
  });

  it("parses a policy with limits", () => {
    expect(Policy.parse(makePolicy({ limits: makeLimits() })).limits).toEqual(makeLimits());
  });
});

describe("PolicyBody", () => {
  it("applies the defaults", () => {
    expect(PolicyBody.parse(makePolicyBody())).toEqual({
      ...makePolicyBody(),
      description: "",
      enabled: true,
      guardrail_ids: [],
      mcp_servers: [],
    });
  });

  it("keeps explicit optional values", () => {
    const body = PolicyBody.parse(
      makePolicyBody({ description: "why", enabled: false, guardrail_ids: ["gr-1"], limits: makeLimits() }),
    );
    expect(body).toMatchObject({
      description: "why",
      enabled: false,
      guardrail_ids: ["gr-1"],
      limits: makeLimits(),
    });
  });

  it.each(["name", "source_groups", "destination_provider_ids"])("requires %s", (field) => {
    const { [field as "name"]: _dropped, ...rest } = makePolicyBody();
    expect(issuePaths(PolicyBody.safeParse(rest))).toEqual([field]);
  });

  it("takes no provider in a policy that grants an MCP server, and needs one of the two", () => {
    const grant = { server_id: "mcp-1" };
    const parsed = PolicyBody.parse(makePolicyBody({ destination_provider_ids: [], mcp_servers: [grant] }));
    expect(parsed.mcp_servers).toEqual([{ server_id: "mcp-1", include_tools: [], exclude_tools: [] }]);
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ destination_provider_ids: [] })))).toEqual([
      "destination_provider_ids",
    ]);
  });

  it("rejects a server granted twice in one policy", () => {
    const grants = [{ server_id: "mcp-1" }, { server_id: "mcp-1", include_tools: ["x"] }];
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ mcp_servers: grants })))).toEqual([
      "mcp_servers.1.server_id",
    ]);
  });

  it("rejects a blank name", () => {
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ name: " " })))).toEqual(["name"]);
  });

  it.each(["source_groups", "destination_provider_ids"])("rejects an empty %s", (field) => {
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ [field]: [] })))).toEqual([field]);
  });

  it("rejects an empty guardrail id", () => {
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ guardrail_ids: [""] })))).toEqual([
      "guardrail_ids.0",
    ]);
  });

  it("validates limits when sent", () => {
    const limits = { ...makeLimits(), token_limit: { ...makeLimits().token_limit, user_cap: -5 } };
    expect(issuePaths(PolicyBody.safeParse(makePolicyBody({ limits })))).toEqual([
      "limits.token_limit.user_cap",
    ]);
  });

  it("strips response-only fields", () => {
    expect(PolicyBody.parse(makePolicyBody({ id: "pol-9", created_at: "now" }))).not.toHaveProperty("id");
  });
});
