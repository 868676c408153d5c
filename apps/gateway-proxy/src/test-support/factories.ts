import type {
  BudgetRule,
  Caller,
  GatewayMcpServer,
  GatewayProvider,
  Guardrail,
  Limits,
  Policy,
  Settings,
} from "@agentnet/contracts";

const at = "2026-01-01T00:00:00Z";

/** Complete, valid objects: a test states only what it is about. */
export const makeProvider = (overrides: Partial<GatewayProvider> = {}): GatewayProvider => ({
  id: "prov_openai",
  provider_id: "openai_api",
  name: "OpenAI",
  upstream_url: "https://api.openai.com/v1",
  models: [],
  extra_values: {},
  identity_header_user_id: "",
  identity_header_groups: "",
  enabled: true,
  skip_tls_verification: false,
  metadata_disabled: false,
  created_at: at,
  updated_at: at,
  sealed_api_key: { v: 1, kid: "k", iv: "", tag: "", ct: "" },
  ...overrides,
});

export const makePolicy = (overrides: Partial<Policy> = {}): Policy => ({
  id: "pol_1",
  name: "p",
  description: "",
  enabled: true,
  source_groups: ["grp_eng"],
  destination_provider_ids: ["prov_openai"],
  guardrail_ids: [],
  mcp_servers: [],
  created_at: at,
  updated_at: at,
  ...overrides,
});

export const makeGuardrail = (overrides: Partial<Guardrail> = {}): Guardrail => ({
  id: "gr_1",
  name: "g",
  description: "",
  checks: {
    model_allowlist: { enabled: false, models: [] },
    prompt_capture: { enabled: false, redact_pii: false },
  },
  created_at: at,
  updated_at: at,
  ...overrides,
});

export const makeLimits = (overrides: Partial<Limits> = {}): Limits => ({
  token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
  ...overrides,
});

export const makeRule = (overrides: Partial<BudgetRule> = {}): BudgetRule => ({
  id: "rule_1",
  name: "r",
  enabled: true,
  target_groups: [],
  target_users: [],
  limits: makeLimits(),
  created_at: at,
  updated_at: at,
  ...overrides,
});

export const makeSettings = (overrides: Partial<Settings> = {}): Settings => ({
  endpoint: "acme.gw.example.com",
  proxy_address: "gw.example.com",
  dedicated: false,
  enable_log_collection: true,
  enable_prompt_collection: false,
  redact_pii: false,
  access_log_retention_days: 30,
  ...overrides,
});

export const makeCaller = (overrides: Partial<Caller> = {}): Caller => ({
  account_id: "acc_1",
  user_id: "usr_1",
  role: "user",
  group_ids: ["grp_all", "grp_eng"],
  email: "dev@example.com",
  name: "Dev",
  ...overrides,
});

/** An MCP server as the snapshot carries it, with no credential unless given. */
export const makeMcpServer = (overrides: Partial<GatewayMcpServer> = {}): GatewayMcpServer => ({
  id: "mcp_1",
  name: "tools",
  description: "",
  url: "http://127.0.0.1:9/mcp",
  transport: "streamable_http",
  credential: { kind: "none" },
  enabled: true,
  skip_tls_verification: false,
  price_per_call: 0,
  created_at: at,
  updated_at: at,
  ...overrides,
});
