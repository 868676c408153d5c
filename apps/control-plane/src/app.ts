import { ensureAccountEventsStream, ensureAlertsStream, type NatsConnection } from "@agentnet/bus";
import { Verifier } from "@agentnet/contracts";
import type { SealingKeys } from "@agentnet/sealing";
import { type Logger, MONGO_CONSISTENCY } from "@agentnet/service-kit";
import type { Connection } from "mongoose";
import { AuditJournal } from "./audit/journal";
import { ProxyCooldowns } from "./domain/cooldowns";
import { ActiveEndpoints } from "./domain/settings";
import { registerAccountHandlers } from "./handlers/accounts";
import { registerAgentConfigHandlers } from "./handlers/agent-config";
import { registerAgentCredentialHandlers } from "./handlers/agent-credentials";
import { registerAuditHandlers } from "./handlers/audit";
import { registerBudgetRuleHandlers } from "./handlers/budget-rules";
import { registerCatalogHandlers } from "./handlers/catalog";
import { type Faults, type HandlerContext, NO_FAULTS } from "./handlers/context";
import { registerCredentialAlerts } from "./handlers/credential-alerts";
import { registerGroupHandlers } from "./handlers/groups";
import { registerGuardrailHandlers } from "./handlers/guardrails";
import { registerIdentityHandlers } from "./handlers/identity";
import { registerMcpServerHandlers } from "./handlers/mcp-servers";
import { registerMcpUserCredentialHandlers } from "./handlers/mcp-user-credentials";
import { registerNotificationHandlers } from "./handlers/notifications";
import { registerPolicyHandlers } from "./handlers/policies";
import { registerProviderHandlers } from "./handlers/providers";
import { registerSealingHandlers } from "./handlers/sealing";
import { registerSettingsHandlers } from "./handlers/settings";
import { registerSignInHandlers } from "./handlers/sign-in";
import { createSnapshotBook, watchConfigChanges } from "./handlers/snapshot";
import { registerTokenHandlers } from "./handlers/tokens";
import { registerUserHandlers } from "./handlers/users";
import { OidcClients } from "./identity/oidc-clients";
import { createAgentCredentialModels } from "./store/agent-credential-models";
import { createAgentModels } from "./store/agent-models";
import { createAuditModels } from "./store/audit-models";
import { createModels } from "./store/models";
import { createNotificationModels } from "./store/notification-models";
import { verifySealingKey } from "./store/sealing-canary";
import { createSignInModels } from "./store/sign-in-models";

/**
 * How the control-plane connects to MongoDB: majority writes and reads from the primary
 * (`MONGO_CONSISTENCY`); a request waits at most 2 s for the server and is never queued while
 * disconnected, so an outage is a quick 503 `store.unavailable` (see `handle`).
 */
export const MONGO_CONNECTION_OPTIONS = {
  ...MONGO_CONSISTENCY,
  serverSelectionTimeoutMS: 2_000,
  bufferCommands: false,
} as const;

export interface ControlPlaneDeps {
  nc: NatsConnection;
  connection: Connection;
  logger: Logger;
  sealingKey: SealingKeys;
  verifyTimeoutMs?: number;
  /** The verifier's endpoints; tests point them at a verifier of their own. */
  verifier?: typeof Verifier;
  /** Faults a test asks for; none by default. */
  faults?: Faults;
  /** How long an agent's proxy token lives (`AGN_AGENT_TOKEN_TTL_SECONDS`). */
  agentTokenTtlMs?: number;
}

/** 15 minutes: long enough that an agent asks a few times an hour, short enough that a leaked one soon dies. */
export const DEFAULT_AGENT_TOKEN_TTL_MS = 15 * 60_000;

/** Wires every control-plane endpoint onto a bus connection and a MongoDB connection. */
export async function startControlPlane(deps: ControlPlaneDeps) {
  const [identity, agent, notifications, audit, agentCredentials, signIn] = await Promise.all([
    createModels(deps.connection),
    createAgentModels(deps.connection),
    createNotificationModels(deps.connection),
    createAuditModels(deps.connection),
    createAgentCredentialModels(deps.connection),
    createSignInModels(deps.connection),
  ]);
  await verifySealingKey(agent, deps.sealingKey);
  await ensureAccountEventsStream(deps.nc);
  await ensureAlertsStream(deps.nc);
  const ctx: HandlerContext = {
    nc: deps.nc,
    logger: deps.logger,
    models: { ...identity, ...agent, ...notifications, ...audit, ...agentCredentials, ...signIn },
    agentTokenTtlMs: deps.agentTokenTtlMs ?? DEFAULT_AGENT_TOKEN_TTL_MS,
    audit: new AuditJournal(audit, deps.logger),
    faults: deps.faults ?? NO_FAULTS,
    sealingKey: deps.sealingKey,
    activeEndpoints: new ActiveEndpoints(),
    proxyCooldowns: new ProxyCooldowns(),
    verifyTimeoutMs: deps.verifyTimeoutMs ?? 15_000,
    verifier: deps.verifier ?? Verifier,
    snapshots: createSnapshotBook(deps),
    oidc: new OidcClients(deps.sealingKey),
  };
  watchConfigChanges(ctx);
  for (const register of [
    registerIdentityHandlers,
    registerAccountHandlers,
    registerUserHandlers,
    registerGroupHandlers,
    registerTokenHandlers,
    registerSettingsHandlers,
    registerBudgetRuleHandlers,
    registerCatalogHandlers,
    registerProviderHandlers,
    registerPolicyHandlers,
    registerGuardrailHandlers,
    registerMcpServerHandlers,
    registerMcpUserCredentialHandlers,
    registerAgentConfigHandlers,
    registerSealingHandlers,
    registerNotificationHandlers,
    registerCredentialAlerts,
    registerAuditHandlers,
    registerAgentCredentialHandlers,
    registerSignInHandlers,
  ]) {
    register(ctx);
  }
  // A flush makes sure the server has every subscription before anyone sends a request.
  await deps.nc.flush();
  return ctx;
}
