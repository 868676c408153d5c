import type {
  BudgetRule,
  GatewayMcpServer,
  GatewayProvider,
  Guardrail,
  McpServer,
  Policy,
  Provider,
  Settings,
} from "@agentnet/contracts";
import type {
  BudgetRuleDoc,
  GuardrailDoc,
  McpServerDoc,
  PolicyDoc,
  ProviderDoc,
  SettingsDoc,
} from "./agent-models";

const stamps = (doc: { created_at: Date; updated_at: Date }) => ({
  created_at: doc.created_at.toISOString(),
  updated_at: doc.updated_at.toISOString(),
});

export const toSettings = (doc: SettingsDoc): Settings => ({
  endpoint: doc.endpoint,
  proxy_address: doc.proxy_address,
  dedicated: doc.dedicated,
  enable_log_collection: doc.enable_log_collection,
  enable_prompt_collection: doc.enable_prompt_collection,
  redact_pii: doc.redact_pii,
  access_log_retention_days: doc.access_log_retention_days,
  ...stamps(doc),
});

/** The API view: every field but the credential, which is never returned. */
export const toProvider = (doc: ProviderDoc): Provider => ({
  id: doc._id,
  provider_id: doc.provider_id,
  name: doc.name,
  upstream_url: doc.upstream_url,
  models: doc.models,
  extra_values: doc.extra_values,
  identity_header_user_id: doc.identity_header_user_id,
  identity_header_groups: doc.identity_header_groups,
  enabled: doc.enabled,
  skip_tls_verification: doc.skip_tls_verification,
  metadata_disabled: doc.metadata_disabled,
  ...(doc.credential_kind ? { credential_kind: doc.credential_kind } : {}),
  ...(doc.anthropic_betas ? { anthropic_betas: doc.anthropic_betas } : {}),
  ...stamps(doc),
});

/** The proxy's view: the credential stays sealed. */
export const toGatewayProvider = (doc: ProviderDoc): GatewayProvider => ({
  ...toProvider(doc),
  sealed_api_key: doc.sealed_api_key,
});

export const toPolicy = (doc: PolicyDoc): Policy => ({
  id: doc._id,
  name: doc.name,
  description: doc.description,
  enabled: doc.enabled,
  source_groups: doc.source_groups,
  destination_provider_ids: doc.destination_provider_ids,
  guardrail_ids: doc.guardrail_ids,
  mcp_servers: doc.mcp_servers ?? [],
  ...(doc.limits ? { limits: doc.limits } : {}),
  ...(doc.routing ? { routing: doc.routing } : {}),
  ...stamps(doc),
});

export const toGuardrail = (doc: GuardrailDoc): Guardrail => ({
  id: doc._id,
  name: doc.name,
  description: doc.description,
  checks: doc.checks,
  ...stamps(doc),
});

export const toBudgetRule = (doc: BudgetRuleDoc): BudgetRule => ({
  id: doc._id,
  name: doc.name,
  enabled: doc.enabled,
  target_groups: doc.target_groups,
  target_users: doc.target_users,
  limits: doc.limits,
  ...stamps(doc),
});

/** The API view: the credential's kind and header, never its value. */
export const toMcpServer = (doc: McpServerDoc): McpServer => ({
  id: doc._id,
  name: doc.name,
  description: doc.description,
  url: doc.url,
  transport: doc.transport,
  credential: credentialOf(doc),
  enabled: doc.enabled,
  skip_tls_verification: doc.skip_tls_verification,
  price_per_call: doc.price_per_call,
  ...stamps(doc),
});

/** The credential as reads show it: never the value or the client secret. */
function credentialOf(doc: McpServerDoc): McpServer["credential"] {
  switch (doc.credential_kind) {
    case "none":
      return { kind: "none" };
    case "oauth_client_credentials":
      return {
        kind: "oauth_client_credentials",
        token_url: doc.oauth_token_url ?? "",
        client_id: doc.oauth_client_id ?? "",
        ...(doc.oauth_scope ? { scope: doc.oauth_scope } : {}),
      };
    default:
      return { kind: doc.credential_kind, header_name: doc.credential_header ?? "" };
  }
}

/** The proxy's view: the credential's value stays sealed. */
export const toGatewayMcpServer = (doc: McpServerDoc): GatewayMcpServer => ({
  ...toMcpServer(doc),
  ...(doc.sealed_credential ? { sealed_credential: doc.sealed_credential } : {}),
});
