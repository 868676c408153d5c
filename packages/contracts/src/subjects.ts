import { z } from "zod";
import { Account, BootstrapAccountBody, BootstrapAccountReply, UpdateAccountBody } from "./account";
import { AgentConfig } from "./agent-config";
import {
  AgentCredential,
  AgentTokens,
  DeviceApproval,
  DeviceApprovalBody,
  DeviceAuthorization,
  DeviceCodeBody,
  DevicePreview,
  DevicePreviewQuery,
  DeviceTokenBody,
  RefreshBody,
} from "./agent-credentials";
import {
  AuditEntry,
  AuditPage,
  AuditQuery,
  AuditRefusal,
  AuditSeq,
  AuditSettings,
  AuditVerification,
} from "./audit";
import { BudgetRule, BudgetRuleBody } from "./budget-rules";
import { CatalogProvider, DiscoverModelsBody, DiscoverModelsReply } from "./catalog";
import { Caller, Empty, Id, RequestOrigin } from "./common";
import { GatewaySnapshot } from "./gateway";
import { Group, GroupBody } from "./groups";
import { Guardrail, GuardrailBody } from "./guardrails";
import {
  IdentityProvider,
  IdentityProviderBody,
  SignInFinish,
  SignInRedirect,
  SignInSession,
  SignInStart,
} from "./identity-provider";
import {
  CreateMcpServerBody,
  McpServer,
  McpUserCredential,
  McpUserCredentialBody,
  McpUserCredentialOf,
  McpUserCredentialSealed,
  UpdateMcpServerBody,
} from "./mcp-servers";
import { PageRequest, TextPage } from "./pages";
import { Policy, PolicyBody } from "./policies";
import { CreateProviderBody, Provider, UpdateProviderBody } from "./providers";
import { CreateSettingsBody, Settings, UpdateSettingsBody } from "./settings";
import { CreateTokenBody, PersonalAccessToken, PersonalAccessTokenGenerated } from "./tokens";
import { CreateUserBody, UpdateUserBody, User } from "./users";

/** One NATS request/reply endpoint: its subject and both message schemas. */
export interface Endpoint<Req extends z.ZodType = z.ZodType, Rep extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly request: Req;
  readonly reply: Rep;
}

export const endpoint = <Req extends z.ZodType, Rep extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Rep,
): Endpoint<Req, Rep> => ({ subject, request, reply });

/**
 * An endpoint whose reply may outgrow one message: answered in `TextPage`s (see pages.ts) that,
 * joined, are the JSON of `value`. `requestPaged` (packages/bus) fetches and checks the whole.
 */
export interface PagedEndpoint<Req extends z.ZodType = z.ZodType, Value extends z.ZodType = z.ZodType>
  extends Endpoint<Req, typeof TextPage> {
  readonly value: Value;
}

export const pagedEndpoint = <Shape extends z.ZodRawShape, Value extends z.ZodType>(
  subject: string,
  request: z.ZodObject<Shape>,
  value: Value,
) => ({ subject, request: request.extend(PageRequest.shape), reply: TextPage, value });

export const isPaged = (endpoint: Endpoint): endpoint is PagedEndpoint => "value" in endpoint;

/** Every control-plane call names who is asking; handlers scope by `caller.account_id`. */
export const byCaller = <T extends z.ZodRawShape>(shape: T) => z.object({ caller: Caller, ...shape });

export type RequestOf<E extends Endpoint> = z.input<E["request"]>;
export type ReplyOf<E extends Endpoint> = z.output<E["reply"]>;

/** Queue groups: every replica of a service shares one, so each request is handled once. */
export const QUEUE = {
  controlPlane: "control-plane",
  verifier: "provider-verifier",
  telemetry: "telemetry",
  consumption: "consumption",
} as const;

/** Only the token's hash travels on the bus (see `hashToken`): a subscriber never sees a usable token. */
export const AuthResolveRequest = z.object({ token_hash: z.string().regex(/^[0-9a-f]{64}$/) });

export const ControlPlane = {
  authResolve: endpoint("agn.ctl.auth.resolve", AuthResolveRequest, Caller),

  accountsBootstrap: endpoint("agn.ctl.accounts.bootstrap", BootstrapAccountBody, BootstrapAccountReply),
  accountsList: endpoint("agn.ctl.accounts.list", byCaller({}), z.array(Account)),
  accountsUpdate: endpoint(
    "agn.ctl.accounts.update",
    byCaller({ account_id: Id, body: UpdateAccountBody }),
    Account,
  ),
  accountsDelete: endpoint("agn.ctl.accounts.delete", byCaller({ account_id: Id }), Empty),

  /** Paged: thousands of users outgrow one message. */
  usersList: pagedEndpoint("agn.ctl.users.list", byCaller({}), z.array(User)),
  usersGet: endpoint("agn.ctl.users.get", byCaller({ user_id: Id }), User),
  usersCreate: endpoint("agn.ctl.users.create", byCaller({ body: CreateUserBody }), User),
  usersUpdate: endpoint("agn.ctl.users.update", byCaller({ user_id: Id, body: UpdateUserBody }), User),
  usersDelete: endpoint("agn.ctl.users.delete", byCaller({ user_id: Id }), Empty),

  groupsList: endpoint("agn.ctl.groups.list", byCaller({}), z.array(Group)),
  groupsGet: endpoint("agn.ctl.groups.get", byCaller({ group_id: Id }), Group),
  groupsCreate: endpoint("agn.ctl.groups.create", byCaller({ body: GroupBody }), Group),
  groupsUpdate: endpoint("agn.ctl.groups.update", byCaller({ group_id: Id, body: GroupBody }), Group),
  groupsDelete: endpoint("agn.ctl.groups.delete", byCaller({ group_id: Id }), Empty),

  tokensList: endpoint("agn.ctl.tokens.list", byCaller({ user_id: Id }), z.array(PersonalAccessToken)),
  tokensCreate: endpoint(
    "agn.ctl.tokens.create",
    byCaller({ user_id: Id, body: CreateTokenBody }),
    PersonalAccessTokenGenerated,
  ),
  tokensDelete: endpoint("agn.ctl.tokens.delete", byCaller({ user_id: Id, token_id: Id }), Empty),

  settingsGet: endpoint("agn.ctl.settings.get", byCaller({}), Settings),
  settingsCreate: endpoint("agn.ctl.settings.create", byCaller({ body: CreateSettingsBody }), Settings),
  settingsUpdate: endpoint("agn.ctl.settings.update", byCaller({ body: UpdateSettingsBody }), Settings),
  settingsDelete: endpoint("agn.ctl.settings.delete", byCaller({}), Empty),

  budgetRulesList: endpoint("agn.ctl.budget_rules.list", byCaller({}), z.array(BudgetRule)),
  budgetRulesGet: endpoint("agn.ctl.budget_rules.get", byCaller({ rule_id: Id }), BudgetRule),
  budgetRulesCreate: endpoint("agn.ctl.budget_rules.create", byCaller({ body: BudgetRuleBody }), BudgetRule),
  budgetRulesUpdate: endpoint(
    "agn.ctl.budget_rules.update",
    byCaller({ rule_id: Id, body: BudgetRuleBody }),
    BudgetRule,
  ),
  budgetRulesDelete: endpoint("agn.ctl.budget_rules.delete", byCaller({ rule_id: Id }), Empty),

  catalogList: endpoint("agn.ctl.catalog.list", byCaller({}), z.array(CatalogProvider)),
  catalogDiscover: endpoint(
    "agn.ctl.catalog.discover",
    byCaller({ body: DiscoverModelsBody }),
    DiscoverModelsReply,
  ),

  /** Paged: an account's providers with thousands of model rows outgrow one message. */
  providersList: pagedEndpoint("agn.ctl.providers.list", byCaller({}), z.array(Provider)),
  providersGet: endpoint("agn.ctl.providers.get", byCaller({ provider_id: Id }), Provider),
  providersCreate: endpoint("agn.ctl.providers.create", byCaller({ body: CreateProviderBody }), Provider),
  providersUpdate: endpoint(
    "agn.ctl.providers.update",
    byCaller({ provider_id: Id, body: UpdateProviderBody }),
    Provider,
  ),
  providersDelete: endpoint("agn.ctl.providers.delete", byCaller({ provider_id: Id }), Empty),

  policiesList: endpoint("agn.ctl.policies.list", byCaller({}), z.array(Policy)),
  policiesGet: endpoint("agn.ctl.policies.get", byCaller({ policy_id: Id }), Policy),
  policiesCreate: endpoint("agn.ctl.policies.create", byCaller({ body: PolicyBody }), Policy),
  policiesUpdate: endpoint("agn.ctl.policies.update", byCaller({ policy_id: Id, body: PolicyBody }), Policy),
  policiesDelete: endpoint("agn.ctl.policies.delete", byCaller({ policy_id: Id }), Empty),

  guardrailsList: endpoint("agn.ctl.guardrails.list", byCaller({}), z.array(Guardrail)),
  guardrailsGet: endpoint("agn.ctl.guardrails.get", byCaller({ guardrail_id: Id }), Guardrail),
  guardrailsCreate: endpoint("agn.ctl.guardrails.create", byCaller({ body: GuardrailBody }), Guardrail),
  guardrailsUpdate: endpoint(
    "agn.ctl.guardrails.update",
    byCaller({ guardrail_id: Id, body: GuardrailBody }),
    Guardrail,
  ),
  guardrailsDelete: endpoint("agn.ctl.guardrails.delete", byCaller({ guardrail_id: Id }), Empty),

  mcpServersList: endpoint("agn.ctl.mcp_servers.list", byCaller({}), z.array(McpServer)),
  mcpServersGet: endpoint("agn.ctl.mcp_servers.get", byCaller({ server_id: Id }), McpServer),
  mcpServersCreate: endpoint(
    "agn.ctl.mcp_servers.create",
    byCaller({ body: CreateMcpServerBody }),
    McpServer,
  ),
  mcpServersUpdate: endpoint(
    "agn.ctl.mcp_servers.update",
    byCaller({ server_id: Id, body: UpdateMcpServerBody }),
    McpServer,
  ),
  mcpServersDelete: endpoint("agn.ctl.mcp_servers.delete", byCaller({ server_id: Id }), Empty),
  /** Any member: their own credential for a per-user server (docs/API.md "Per-user credentials"). */
  mcpMyCredentialGet: endpoint(
    "agn.ctl.mcp_servers.my_credential.get",
    byCaller({ server_id: Id }),
    McpUserCredential,
  ),
  mcpMyCredentialPut: endpoint(
    "agn.ctl.mcp_servers.my_credential.put",
    byCaller({ server_id: Id, body: McpUserCredentialBody }),
    McpUserCredential,
  ),
  mcpMyCredentialDelete: endpoint(
    "agn.ctl.mcp_servers.my_credential.delete",
    byCaller({ server_id: Id }),
    Empty,
  ),
  /** Service-to-service (the proxy): a member's sealed credential for a per-user server, if set. */
  mcpUserCredentialOf: endpoint(
    "agn.ctl.mcp_user_credential.of",
    McpUserCredentialOf,
    McpUserCredentialSealed,
  ),

  /** Paged: a caller reaching providers with thousands of model rows gets them all listed. */
  agentConfig: pagedEndpoint("agn.ctl.agent_config", byCaller({}), AgentConfig),
  /** The proxy's view of one account (sealed credentials), paged: see docs/ARCHITECTURE.md "Account snapshot". */
  gatewaySnapshot: pagedEndpoint(
    "agn.ctl.gateway.snapshot",
    z.object({
      account_id: Id,
      /**
       * Render anew rather than answer the rendering in hand: asked by a reader that just heard the
       * account change, since the replica answering may not have heard it yet and would answer
       * what it rendered before. Optional: readers from before it was added ask without it.
       */
      fresh: z.boolean().optional(),
    }),
    GatewaySnapshot,
  ),
  /** Service-to-service: an account's settings whatever the caller's role (telemetry reads log collection). */
  settingsOfAccount: endpoint("agn.ctl.settings.of_account", z.object({ account_id: Id }), Settings),
  /**
   * Operator only (the `cli` bus user): re-seals every stored credential with the current sealing
   * key, so older keys can be dropped from AGN_SEALING_KEY.
   */
  sealingReseal: endpoint(
    "agn.ctl.sealing.reseal",
    z.object({}),
    z.object({
      current_key: z.string(),
      resealed: z.number().int(),
      already_current: z.number().int(),
      /** Sealed with a key the ring does not hold: left as they are. */
      unopened: z.number().int(),
    }),
  ),
  /** Owner, admin, auditor: the account's audit trail, newest first (docs/API.md "Audit trail"). */
  auditList: pagedEndpoint("agn.ctl.audit.list", byCaller({ query: AuditQuery }), AuditPage),
  auditVerify: endpoint("agn.ctl.audit.verify", byCaller({}), AuditVerification),
  auditGet: endpoint("agn.ctl.audit.get", byCaller({ seq: AuditSeq }), AuditEntry),
  auditSettingsGet: endpoint("agn.ctl.audit.settings.get", byCaller({}), AuditSettings),
  /** Owner only: a shorter retention drops evidence. */
  auditSettingsUpdate: endpoint(
    "agn.ctl.audit.settings.update",
    byCaller({ body: AuditSettings }),
    AuditSettings,
  ),
  /** The api-gateway: a change it refused before asking the control-plane, for the caller's trail. */
  auditRefused: endpoint("agn.ctl.audit.refused", byCaller({ refusal: AuditRefusal }), Empty),
  /**
   * Agent credentials (docs/API.md "Agent credentials"). The three without a caller are the
   * api-gateway's public OAuth-style endpoints: the device code, its poll, a refresh.
   */
  deviceCodeStart: endpoint(
    "agn.ctl.agent_credentials.device_code",
    z.object({
      body: DeviceCodeBody,
      verification_uri: z.string().max(2_048),
      /** Where the agent asked from, shown to the member who confirms its code. */
      origin: RequestOrigin.optional(),
    }),
    DeviceAuthorization,
  ),
  deviceCodePoll: endpoint("agn.ctl.agent_credentials.device_token", DeviceTokenBody, AgentTokens),
  agentTokenRefresh: endpoint("agn.ctl.agent_credentials.refresh", RefreshBody, AgentTokens),
  /** Any member: who asked for a pending device code, before approving it. */
  deviceCodePreview: endpoint(
    "agn.ctl.agent_credentials.device_preview",
    byCaller({ query: DevicePreviewQuery }),
    DevicePreview,
  ),
  /** Any member: approves (or refuses) a device code for themself. */
  deviceCodeApprove: endpoint(
    "agn.ctl.agent_credentials.approve",
    byCaller({ body: DeviceApprovalBody }),
    DeviceApproval,
  ),
  /** The caller's own agent credentials. */
  agentCredentialsList: endpoint("agn.ctl.agent_credentials.list", byCaller({}), z.array(AgentCredential)),
  agentCredentialsDelete: endpoint(
    "agn.ctl.agent_credentials.delete",
    byCaller({ credential_id: Id }),
    Empty,
  ),
  /** The account's OpenID Connect provider (docs/API.md "Sign-in with your identity provider"). */
  identityProviderGet: endpoint("agn.ctl.identity_provider.get", byCaller({}), IdentityProvider),
  identityProviderPut: endpoint(
    "agn.ctl.identity_provider.put",
    byCaller({ body: IdentityProviderBody }),
    IdentityProvider,
  ),
  identityProviderDelete: endpoint("agn.ctl.identity_provider.delete", byCaller({}), Empty),
  /** The api-gateway's sign-in: where to send the browser, then the provider's answer redeemed. */
  signInStart: endpoint("agn.ctl.sessions.start", SignInStart, SignInRedirect),
  signInFinish: endpoint("agn.ctl.sessions.create", SignInFinish, SignInSession),
  /** Signs a browser session out (the caller is the session's). */
  signOut: endpoint("agn.ctl.sessions.delete", byCaller({}), Empty),
  /** Every account's access-log retention, for telemetry's sweep. */
  retentionList: endpoint(
    "agn.ctl.settings.retention",
    z.object({}),
    z.array(z.object({ account_id: Id, access_log_retention_days: z.number().int() })),
  ),
} as const;

/** Published, not requested. */
export const Events = {
  /** Any configuration of the account changed: proxies drop their snapshot. */
  configChanged: (accountId: string) => `agn.config.changed.${accountId}`,
  configChangedAll: "agn.config.changed.*",
  accountDeleted: "agn.account.deleted",
  /** Cached callers that must not be served any more (`CallersRevokedEvent`): proxies and api-gateways drop them. */
  callersRevoked: "agn.callers.revoked",
  /** JetStream subject of the gateway's per-request events. */
  requests: (accountId: string) => `agn.requests.${accountId}`,
  requestsAll: "agn.requests.>",
  proxyHeartbeat: "agn.proxy.heartbeat",
  /**
   * A proxy admitted requests and is forwarding them: the events they stand for if the proxy dies
   * before their answers end (see PROXY_LOST_REASON), one line `<request id> <event JSON>` each.
   * Core NATS, read by the consumption leader.
   */
  proxyAdmitted: (proxyId: string) => `agn.proxy.admitted.${proxyId}`,
  proxyAdmittedAll: "agn.proxy.admitted.*",
} as const;

/**
 * deny_reason of the row of a request whose proxy died before its answer ended: the consumption
 * leader publishes the proxy's admission event once the proxy has been silent for a while. The
 * request is charged what it held when admitted (prompt estimate plus its first output hold).
 */
export const PROXY_LOST_REASON = "gateway.proxy_lost";
/** The status such a row carries: the gateway failed to complete the request. */
export const PROXY_LOST_STATUS = 502;

export const AccountDeletedEvent = z.object({ v: z.literal(1), account_id: Id, deleted_at: z.string() });
export type AccountDeletedEvent = z.infer<typeof AccountDeletedEvent>;

export const REQUESTS_STREAM = "AGN_REQUESTS";

/**
 * Account lifecycle events (`agn.account.>`), kept in JetStream so a service that is down when an
 * account is deleted still deletes that account's data when it comes back.
 */
export const ACCOUNT_EVENTS_STREAM = "AGN_ACCOUNT_EVENTS";
