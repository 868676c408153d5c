import type {
  AccessLogEntryView,
  AccessLogPage,
  AccessLogSessionPage,
  Account,
  AgentConfig,
  AgentCredential,
  AuditEntry,
  AuditPage,
  AuditVerification,
  BudgetRule,
  CapStatus,
  CatalogProvider,
  ConsumptionCounter,
  CreateTokenBody,
  DeviceApproval,
  DevicePreview,
  DiscoveredModel,
  Group,
  Guardrail,
  IdentityProvider,
  IdentityProviderBody,
  McpServer,
  McpUserCredential,
  NotificationDelivery,
  NotificationSettings,
  NotificationSettingsWithSecret,
  PersonalAccessToken,
  PersonalAccessTokenGenerated,
  Policy,
  Provider,
  SessionInfo,
  Settings,
  UpdateMcpServerBody,
  UpdateUserBody,
  UsageBreakdown,
  UsageSeries,
  User,
} from "@agentnet/contracts";
import { ApiError, apiDownload, apiFetch, type Credentials, type Query, toSearch } from "./client";

const AN = "/api/agent-network";
/** Public: served without a token, so a plain link downloads it. */
export const OPENAPI_DOCUMENT = "/api/openapi.json";

/** Bodies as the dashboard sends them (the API fills the defaults). */
export type SettingsCreate = {
  proxy_address?: string;
  endpoint?: string;
  enable_log_collection: boolean;
  enable_prompt_collection: boolean;
  redact_pii: boolean;
  access_log_retention_days: number;
};
export type SettingsUpdate = Required<SettingsCreate>;
// anthropic_betas: null clears the stored list back to the catalog's.
export type ProviderBody = Omit<Provider, "id" | "created_at" | "updated_at" | "anthropic_betas"> & {
  api_key?: string;
  anthropic_betas?: string[] | null;
};
export type PolicyBody = Omit<Policy, "id" | "created_at" | "updated_at">;
export type GuardrailBody = Omit<Guardrail, "id" | "created_at" | "updated_at">;
/**
 * One body for POST and PUT, as PUT takes it: `credential` left out keeps the stored one on PUT
 * (its value is write-only) and is `none` on POST.
 */
export type McpServerBody = UpdateMcpServerBody;
export type BudgetRuleBody = Omit<BudgetRule, "id" | "created_at" | "updated_at">;
export type NotificationBody = Omit<NotificationSettings, "created_at" | "updated_at">;
export type UserInvite = Pick<User, "email" | "role" | "auto_groups"> & { name?: string };
export type DiscoverBody = {
  catalog_provider_id: string;
  upstream_url?: string;
  api_key?: string;
  provider_id?: string;
};

/**
 * The browser's session cookie, when it holds one (a sign-in with the identity provider): the
 * session's CSRF token, else undefined (no cookie, or one that expired or was signed out).
 */
export async function readBrowserSession(): Promise<string | undefined> {
  const response = await fetch("/api/auth/session", { headers: { accept: "application/json" } }).catch(
    () => undefined,
  );
  if (!response?.ok) return undefined;
  const session = (await response.json().catch(() => undefined)) as SessionInfo | undefined;
  return session?.csrf_token || undefined;
}

/** Ends the browser session of a sign-in with the identity provider (its cookie is cleared). */
export const signOutBrowserSession = (csrfToken: string) =>
  apiFetch<object>({ csrfToken }, "POST", "/api/auth/sign-out");

/** Typed calls of the public API for one signed-in caller. */
export function createApi(credentials: Credentials) {
  const get = <T>(path: string, query: Query = {}) =>
    apiFetch<T>(credentials, "GET", `${path}${toSearch(query)}`);
  const send = <T>(method: "POST" | "PUT" | "DELETE", path: string, body?: unknown) =>
    apiFetch<T>(credentials, method, path, body);
  const crud = <T, B>(collection: string) => ({
    list: () => get<T[]>(`${AN}/${collection}`),
    create: (body: B) => send<T>("POST", `${AN}/${collection}`, body),
    update: (id: string, body: B) => send<T>("PUT", `${AN}/${collection}/${encodeURIComponent(id)}`, body),
    remove: (id: string) => send<object>("DELETE", `${AN}/${collection}/${encodeURIComponent(id)}`),
  });
  return {
    users: () => get<User[]>("/api/users"),
    groups: () => get<Group[]>("/api/groups"),
    createGroup: (name: string) => send<Group>("POST", "/api/groups", { name }),
    renameGroup: (id: string, name: string) =>
      send<Group>("PUT", `/api/groups/${encodeURIComponent(id)}`, { name }),
    deleteGroup: (id: string) => send<object>("DELETE", `/api/groups/${encodeURIComponent(id)}`),
    inviteUser: (body: UserInvite) => send<User>("POST", "/api/users", body),
    updateUser: (id: string, body: UpdateUserBody) =>
      send<User>("PUT", `/api/users/${encodeURIComponent(id)}`, body),
    deleteUser: (id: string) => send<object>("DELETE", `/api/users/${encodeURIComponent(id)}`),
    tokens: (userId: string) => get<PersonalAccessToken[]>(`/api/users/${encodeURIComponent(userId)}/tokens`),
    createToken: (userId: string, body: CreateTokenBody) =>
      send<PersonalAccessTokenGenerated>("POST", `/api/users/${encodeURIComponent(userId)}/tokens`, body),
    revokeToken: (userId: string, tokenId: string) =>
      send<object>(
        "DELETE",
        `/api/users/${encodeURIComponent(userId)}/tokens/${encodeURIComponent(tokenId)}`,
      ),
    accounts: () => get<Account[]>("/api/accounts"),
    updateAccount: (id: string, body: { settings: Account["settings"] }) =>
      send<Account>("PUT", `/api/accounts/${encodeURIComponent(id)}`, body),
    accessLogs: (query: Query) => get<AccessLogPage>(`${AN}/access-logs`, query),
    /** One entry by id with its prompt and completion whole, or undefined when the caller has no such entry. */
    accessLog: (id: string) =>
      get<AccessLogEntryView>(`${AN}/access-logs/${encodeURIComponent(id)}`).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      }),
    sessions: (query: Query) => get<AccessLogSessionPage>(`${AN}/access-log-sessions`, query),
    usageSeries: (query: Query) => get<UsageSeries>(`${AN}/usage/series`, query),
    usageBreakdown: (query: Query) => get<UsageBreakdown>(`${AN}/usage/breakdown`, query),
    /** The API's OpenAPI 3.1 document, read as untrusted JSON (domain/openapi.ts). */
    openApiDocument: () => get<unknown>(OPENAPI_DOCUMENT),
    consumption: () => get<ConsumptionCounter[]>(`${AN}/consumption`),
    consumptionCaps: () => get<CapStatus[]>(`${AN}/consumption/caps`),
    agentConfig: () => get<AgentConfig>(`${AN}/agent-config`),
    settings: () => get<Settings>(`${AN}/settings`),
    createSettings: (body: SettingsCreate) => send<Settings>("POST", `${AN}/settings`, body),
    updateSettings: (body: SettingsUpdate) => send<Settings>("PUT", `${AN}/settings`, body),
    deleteSettings: () => send<object>("DELETE", `${AN}/settings`),
    catalog: () => get<CatalogProvider[]>(`${AN}/catalog/providers`),
    discoverModels: (body: DiscoverBody) =>
      send<{ models: DiscoveredModel[] }>("POST", `${AN}/catalog/providers/models`, body),
    providers: crud<Provider, ProviderBody>("providers"),
    policies: crud<Policy, PolicyBody>("policies"),
    guardrails: crud<Guardrail, GuardrailBody>("guardrails"),
    mcpServers: crud<McpServer, McpServerBody>("mcp-servers"),
    /** The caller's own credential for a per-user MCP server: set (write-only) or removed. */
    setMyMcpCredential: (serverId: string, value: string) =>
      send<McpUserCredential>("PUT", `${AN}/mcp-servers/${encodeURIComponent(serverId)}/my-credential`, {
        value,
      }),
    removeMyMcpCredential: (serverId: string) =>
      send<object>("DELETE", `${AN}/mcp-servers/${encodeURIComponent(serverId)}/my-credential`),
    budgetRules: crud<BudgetRule, BudgetRuleBody>("budget-rules"),
    /** The webhook for alerts, or undefined when the account has none. */
    notifications: () =>
      get<NotificationSettings>(`${AN}/notifications`).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      }),
    createNotifications: (body: NotificationBody) =>
      send<NotificationSettingsWithSecret>("POST", `${AN}/notifications`, body),
    updateNotifications: (body: NotificationBody) =>
      send<NotificationSettings>("PUT", `${AN}/notifications`, body),
    deleteNotifications: () => send<object>("DELETE", `${AN}/notifications`),
    rotateSigningSecret: () => send<NotificationSettingsWithSecret>("POST", `${AN}/notifications/secret`),
    notificationDeliveries: () => get<NotificationDelivery[]>(`${AN}/notifications/deliveries`),
    /** One page of the audit trail, newest first (docs/API.md "Audit trail"). */
    audit: (query: Query) => get<AuditPage>("/api/audit", query),
    /** The entry at `seq`, or undefined when there is none. */
    auditEntry: (seq: number) =>
      get<AuditEntry>(`/api/audit/${seq}`).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      }),
    verifyAudit: () => get<AuditVerification>("/api/audit/verify"),
    /** Who asked for a pending device code, or undefined when none is pending under it. */
    devicePreview: (userCode: string) =>
      get<DevicePreview>("/api/agent-credentials/device", { user_code: userCode }).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      }),
    /** Confirms (or refuses) the device code an agent's `agentnet login` printed; 404 when none is pending. */
    approveDevice: (userCode: string, approve: boolean) =>
      send<DeviceApproval>("POST", "/api/agent-credentials/device", { user_code: userCode, approve }),
    /** The caller's own agent credentials (never their secrets). */
    agentCredentials: () => get<AgentCredential[]>("/api/agent-credentials"),
    revokeAgentCredential: (id: string) =>
      send<object>("DELETE", `/api/agent-credentials/${encodeURIComponent(id)}`),
    /** The account's OpenID Connect provider, or undefined when it has none. */
    identityProvider: () =>
      get<IdentityProvider>("/api/identity-provider").catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      }),
    saveIdentityProvider: (body: IdentityProviderBody) =>
      send<IdentityProvider>("PUT", "/api/identity-provider", body),
    removeIdentityProvider: () => send<object>("DELETE", "/api/identity-provider"),
    /** The whole filtered trail as a file, `query` holding `format` (jsonl or csv) and the filters. */
    exportAudit: (query: Query) =>
      apiDownload(credentials, `/api/audit/export${toSearch(query)}`, `audit.${String(query.format)}`),
  };
}

export type Api = ReturnType<typeof createApi>;
