import type {
  CredentialKind,
  GuardrailChecks,
  Limits,
  McpServerGrant,
  McpTransport,
  PolicyRouting,
  ProviderModel,
  SealedSecret,
} from "@agentnet/contracts";
import { type Connection, type Model, Schema } from "mongoose";

const timestamps = { createdAt: "created_at", updatedAt: "updated_at" } as const;

export interface SettingsDoc {
  _id: string;
  account_id: string;
  endpoint: string;
  proxy_address: string;
  dedicated: boolean;
  enable_log_collection: boolean;
  enable_prompt_collection: boolean;
  redact_pii: boolean;
  access_log_retention_days: number;
  created_at: Date;
  updated_at: Date;
}

export interface ProviderDoc {
  _id: string;
  account_id: string;
  provider_id: string;
  name: string;
  upstream_url: string;
  sealed_api_key: SealedSecret;
  models: ProviderModel[];
  extra_values: Record<string, string>;
  identity_header_user_id: string;
  identity_header_groups: string;
  enabled: boolean;
  skip_tls_verification: boolean;
  metadata_disabled: boolean;
  /** The last vendor check: `verified`, or why the record was stored unverified. */
  verification: string;
  /** What the key is (not secret); absent on providers stored before kinds were recorded. */
  credential_kind?: CredentialKind;
  /** The `anthropic-beta` values forwarded; null or absent (older records): the catalog entry's. */
  anthropic_betas?: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyDoc {
  _id: string;
  account_id: string;
  name: string;
  description: string;
  enabled: boolean;
  source_groups: string[];
  destination_provider_ids: string[];
  guardrail_ids: string[];
  /** Absent on policies stored before MCP servers: they grant none. */
  mcp_servers?: McpServerGrant[];
  limits?: Limits;
  /** Absent when the last create or replace sent none: the policy routes by `DEFAULT_ROUTING`. */
  routing?: PolicyRouting;
  created_at: Date;
  updated_at: Date;
}

export interface McpServerDoc {
  _id: string;
  account_id: string;
  name: string;
  description: string;
  url: string;
  transport: McpTransport;
  /**
   * `header` sends `credential_header: <sealed_credential opened>`; `per_user` sends
   * `credential_header` with the caller's own value (`McpUserCredentialDoc`); `none` sends nothing.
   */
  credential_kind: "none" | "header" | "per_user" | "oauth_client_credentials";
  credential_header?: string;
  /** `oauth_client_credentials`: where tokens are minted, and for whom (the client secret is `sealed_credential`). */
  oauth_token_url?: string;
  oauth_client_id?: string;
  oauth_scope?: string;
  sealed_credential?: SealedSecret;
  enabled: boolean;
  skip_tls_verification: boolean;
  price_per_call: number;
  /** The last check: `verified:<n>_tools`, or why the server was stored unverified (`unverified:<reason>`). */
  verification?: string;
  created_at: Date;
  updated_at: Date;
}

/** A member's own value of a per-user MCP server's credential header. */
export interface McpUserCredentialDoc {
  /** `{server_id}|{user_id}`: one per member and server, whatever writes race. */
  _id: string;
  account_id: string;
  server_id: string;
  user_id: string;
  sealed: SealedSecret;
  created_at: Date;
  updated_at: Date;
}

export interface GuardrailDoc {
  _id: string;
  account_id: string;
  name: string;
  description: string;
  checks: GuardrailChecks;
  created_at: Date;
  updated_at: Date;
}

export interface BudgetRuleDoc {
  _id: string;
  account_id: string;
  name: string;
  enabled: boolean;
  target_groups: string[];
  target_users: string[];
  limits: Limits;
  created_at: Date;
  updated_at: Date;
}

/** A value sealed at first start; opening it at every start proves AGN_SEALING_KEY is the same key. */
export interface SealingCanaryDoc {
  _id: string;
  sealed: SealedSecret;
}

const settingsSchema = new Schema<SettingsDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    endpoint: { type: String, required: true },
    proxy_address: { type: String, default: "" },
    dedicated: Boolean,
    enable_log_collection: Boolean,
    enable_prompt_collection: Boolean,
    redact_pii: Boolean,
    access_log_retention_days: Number,
  },
  { timestamps },
);
// One record per account, and an endpoint held by one account at a time: both decided by the
// index, so two concurrent POSTs cannot both win.
settingsSchema.index({ account_id: 1 }, { unique: true });
settingsSchema.index({ endpoint: 1 }, { unique: true });

const mixed = { type: Schema.Types.Mixed };

const providerSchema = new Schema<ProviderDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    provider_id: String,
    name: String,
    upstream_url: String,
    sealed_api_key: { ...mixed, required: true },
    models: { ...mixed, default: [] },
    extra_values: { ...mixed, default: {} },
    identity_header_user_id: String,
    identity_header_groups: String,
    enabled: Boolean,
    skip_tls_verification: Boolean,
    metadata_disabled: Boolean,
    verification: String,
    credential_kind: String,
    // No default: an array path would otherwise default to [] (no beta passes), not to the catalog's.
    anthropic_betas: { type: [String], default: undefined },
  },
  { timestamps, minimize: false },
);
providerSchema.index({ account_id: 1, created_at: 1 });

const policySchema = new Schema<PolicyDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    name: String,
    description: String,
    enabled: Boolean,
    source_groups: [String],
    destination_provider_ids: [String],
    guardrail_ids: [String],
    // No default: a policy stored before MCP servers reads as granting none either way.
    mcp_servers: { ...mixed, default: undefined },
    limits: mixed,
    routing: mixed,
  },
  // minimize off: a routing without weights keeps its `weights: {}`.
  { timestamps, minimize: false },
);
policySchema.index({ account_id: 1, created_at: 1 });

const mcpServerSchema = new Schema<McpServerDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    name: String,
    description: String,
    url: String,
    transport: String,
    credential_kind: String,
    credential_header: String,
    oauth_token_url: String,
    oauth_client_id: String,
    oauth_scope: String,
    sealed_credential: mixed,
    enabled: Boolean,
    skip_tls_verification: Boolean,
    price_per_call: Number,
    verification: String,
  },
  { timestamps },
);
mcpServerSchema.index({ account_id: 1, created_at: 1 });
// A name is a path segment and a tool prefix: one server per name in an account, decided by the index.
mcpServerSchema.index({ account_id: 1, name: 1 }, { unique: true });

const mcpUserCredentialSchema = new Schema<McpUserCredentialDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    server_id: { type: String, required: true },
    user_id: { type: String, required: true },
    sealed: mixed,
  },
  { timestamps },
);
mcpUserCredentialSchema.index({ account_id: 1, server_id: 1 });
mcpUserCredentialSchema.index({ account_id: 1, user_id: 1 });

const guardrailSchema = new Schema<GuardrailDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    name: String,
    description: String,
    checks: mixed,
  },
  { timestamps },
);
guardrailSchema.index({ account_id: 1, created_at: 1 });

const budgetRuleSchema = new Schema<BudgetRuleDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    name: String,
    enabled: Boolean,
    target_groups: [String],
    target_users: [String],
    limits: mixed,
  },
  { timestamps },
);
budgetRuleSchema.index({ account_id: 1, created_at: 1 });

const canarySchema = new Schema<SealingCanaryDoc>({ _id: String, sealed: mixed });

export interface AgentModels {
  Settings: Model<SettingsDoc>;
  Provider: Model<ProviderDoc>;
  Policy: Model<PolicyDoc>;
  Guardrail: Model<GuardrailDoc>;
  McpServer: Model<McpServerDoc>;
  McpUserCredential: Model<McpUserCredentialDoc>;
  BudgetRule: Model<BudgetRuleDoc>;
  SealingCanary: Model<SealingCanaryDoc>;
}

export async function createAgentModels(connection: Connection): Promise<AgentModels> {
  const models: AgentModels = {
    Settings: connection.model("Settings", settingsSchema, "agent_network_settings"),
    Provider: connection.model("Provider", providerSchema, "providers"),
    Policy: connection.model("Policy", policySchema, "policies"),
    Guardrail: connection.model("Guardrail", guardrailSchema, "guardrails"),
    McpServer: connection.model("McpServer", mcpServerSchema, "mcp_servers"),
    McpUserCredential: connection.model("McpUserCredential", mcpUserCredentialSchema, "mcp_user_credentials"),
    BudgetRule: connection.model("BudgetRule", budgetRuleSchema, "budget_rules"),
    SealingCanary: connection.model("SealingCanary", canarySchema, "sealing_canary"),
  };
  await Promise.all([
    models.Settings.createIndexes(),
    models.Provider.createIndexes(),
    models.Policy.createIndexes(),
    models.Guardrail.createIndexes(),
    models.McpServer.createIndexes(),
    models.McpUserCredential.createIndexes(),
    models.BudgetRule.createIndexes(),
  ]);
  return models;
}
