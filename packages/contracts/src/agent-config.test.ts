import { describe, expect, it } from "vitest";
import { AgentConfig, type AgentConfigProvider } from "./agent-config";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeAgentProvider = (overrides: Partial<AgentConfigProvider> = {}): AgentConfigProvider => ({
  name: "OpenAI production",
  catalog_id: "openai_api",
  api_flavor: "openai",
  all_models_allowed: true,
  models: ["gpt-4o-mini"],
  ...overrides,
});

describe("AgentConfig", () => {
  it("parses a configured account", () => {
    const config = { configured: true, endpoint: "acme.gw.example.com", providers: [makeAgentProvider()] };
    // Replies of control-planes older than the MCP gateway carry no MCP servers: none.
    expect(AgentConfig.parse(config)).toEqual({ ...config, mcp_servers: [] });
  });

  it("parses an unconfigured account and a caller no policy covers", () => {
    expect(AgentConfig.safeParse({ configured: false, endpoint: "", providers: [] }).success).toBe(true);
    expect(
      AgentConfig.safeParse({ configured: true, endpoint: "a.example.com", providers: [] }).success,
    ).toBe(true);
  });

  it.each(["configured", "endpoint", "providers"])("requires %s", (field) => {
    const config: Record<string, unknown> = { configured: true, endpoint: "a.example.com", providers: [] };
    delete config[field];
    expect(issuePaths(AgentConfig.safeParse(config))).toEqual([field]);
  });

  it.each(["name", "catalog_id", "api_flavor", "all_models_allowed", "models"] as const)(
    "requires providers[].%s",
    (field) => {
      const { [field]: _dropped, ...rest } = makeAgentProvider();
      const result = AgentConfig.safeParse({
        configured: true,
        endpoint: "a.example.com",
        providers: [rest],
      });
      expect(issuePaths(result)).toEqual([`providers.0.${field}`]);
    },
  );

  it("strips anything beyond the documented fields (credentials never leak)", () => {
    const provider = { ...makeAgentProvider(), api_key: "sk-secret", upstream_url: "https://x" };
    const config = AgentConfig.parse({ configured: true, endpoint: "a.example.com", providers: [provider] });
    expect(config.providers[0]).not.toHaveProperty("api_key");
  });
});
