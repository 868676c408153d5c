import {
  announceCallerRevocation,
  type Handler,
  type NatsConnection,
  type PageBook,
  pageBookOn,
  serve,
} from "@agentnet/bus";
import {
  AppError,
  type Caller,
  type ConfigChangedEvent,
  conflict,
  type Endpoint,
  Events,
  notFound,
  QUEUE,
  type Verifier,
} from "@agentnet/contracts";
import type { SealingKeys } from "@agentnet/sealing";
import type { Logger } from "@agentnet/service-kit";
import type { AuditJournal } from "../audit/journal";
import type { ProxyCooldowns } from "../domain/cooldowns";
import type { ActiveEndpoints } from "../domain/settings";
import type { OidcClients } from "../identity/oidc-clients";
import type { AgentCredentialModels } from "../store/agent-credential-models";
import type { AgentModels } from "../store/agent-models";
import type { AuditModels } from "../store/audit-models";
import type { Models } from "../store/models";
import type { NotificationModels } from "../store/notification-models";
import type { SignInModels } from "../store/sign-in-models";

/** What every handler group needs: the stores, the bus, the sealing key and a logger. */
export interface HandlerContext {
  models: Models & AgentModels & NotificationModels & AuditModels & AgentCredentialModels & SignInModels;
  /** How long a proxy token minted for an agent credential lives. */
  agentTokenTtlMs: number;
  /** Every change's entry in its account's audit trail (src/audit). */
  audit: AuditJournal;
  /** Faults a test asks for (`AGN_FAULT_*`): none in service. */
  faults: Faults;
  nc: NatsConnection;
  logger: Logger;
  sealingKey: SealingKeys;
  activeEndpoints: ActiveEndpoints;
  /** Providers the proxies say they try last, for the provider reads. */
  proxyCooldowns: ProxyCooldowns;
  /** How long to wait for the provider-verifier's answer. */
  verifyTimeoutMs: number;
  verifier: typeof Verifier;
  /** Rendered account snapshots, answered page by page (see handlers/snapshot.ts). */
  snapshots: PageBook;
  /** The accounts' OpenID Connect clients (src/identity). */
  oidc: OidcClients;
}

/** Where a fault test stops the process on purpose. */
export interface Faults {
  /** Called after a change is stored and before its audit entry is written. */
  beforeAuditEntry(action: string): void;
}

/** No faults: the service as it runs. */
export const NO_FAULTS: Faults = { beforeAuditEntry: () => undefined };

/**
 * Faults from `AGN_FAULT_CRASH_BEFORE_AUDIT_ENTRY` (an action, `policies.update`): the process kills
 * itself (SIGKILL, nothing flushed) once that change is stored and before its entry is written, as
 * a crash or an OOM kill would, for the test that proves recovery writes the entry.
 */
export const faultsFrom = (crashBeforeAuditEntry: string | undefined): Faults =>
  crashBeforeAuditEntry
    ? {
        beforeAuditEntry: (action) => {
          if (action === crashBeforeAuditEntry) process.kill(process.pid, "SIGKILL");
        },
      }
    : NO_FAULTS;

/** Tells proxies and caches (this replica's rendered snapshot first) that an account's configuration changed. */
export const announceConfigChange = (ctx: HandlerContext, accountId: string): void => {
  ctx.snapshots.invalidate(accountId);
  const event: ConfigChangedEvent = { v: 1, account_id: accountId, at: new Date().toISOString() };
  ctx.nc.publish(Events.configChanged(accountId), JSON.stringify(event));
};

/**
 * Tells every proxy and api-gateway to stop serving the callers named, once the change is stored
 * and before the handler answers: resolves when the NATS server has taken the event, so a client
 * that acts on the answer finds no cache still holding the old caller (docs/ARCHITECTURE.md,
 * "Revocation").
 */
export const revokeCallers = (
  ctx: HandlerContext,
  accountId: string,
  {
    wholeAccount = false,
    userIds = [],
    tokenHashes = [],
  }: { wholeAccount?: boolean; userIds?: string[]; tokenHashes?: string[] },
): Promise<void> =>
  announceCallerRevocation(ctx.nc, {
    v: 1,
    account_id: accountId,
    whole_account: wholeAccount,
    user_ids: userIds,
    token_hashes: tokenHashes,
    at: new Date().toISOString(),
  });

/** The driver's ways of saying MongoDB cannot be reached (server selection timed out, socket lost). */
const STORE_UNREACHABLE = new Set([
  "MongoServerSelectionError",
  "MongoNetworkError",
  "MongoNetworkTimeoutError",
  "MongoNotConnectedError",
  "MongoTopologyClosedError",
]);

/**
 * Serves one control-plane endpoint in the service's queue group, logging unexpected failures. A
 * request that finds MongoDB unreachable is 503 `store.unavailable`, which the api-gateway passes
 * on as it is (the proxy keeps serving from its last good answers meanwhile).
 */
export const handle = <E extends Endpoint>(ctx: HandlerContext, endpoint: E, handler: Handler<E>): void => {
  serve(
    ctx.nc,
    endpoint,
    async (request, msg) => {
      try {
        return await handler(request, msg);
      } catch (error) {
        if (error instanceof Error && STORE_UNREACHABLE.has(error.name)) {
          ctx.logger.warn({ err: error, subject: endpoint.subject }, "MongoDB unreachable");
          throw new AppError(
            503,
            "store.unavailable",
            "the configuration store (MongoDB) is not reachable; try again",
          );
        }
        throw error;
      }
    },
    {
      queue: QUEUE.controlPlane,
      onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "handler failed"),
    },
  );
};

/**
 * Answers for a paged list endpoint: rendered on each first page, the later pages of one listing
 * served from its rendering. Lists must be sorted fully (ties broken by `_id`) so that another
 * replica renders equal data into the same pages.
 */
export const createListingBook = (ctx: Pick<HandlerContext, "nc">) => pageBookOn(ctx.nc);

/** Loads one document of the caller's account by id, or 404 (an id of another account is not found, too). */
export async function loadOwned<T>(
  model: { findOne(filter: { _id: string; account_id: string }): { lean(): PromiseLike<T | null> } },
  caller: Caller,
  id: string,
  what: string,
): Promise<T> {
  const doc = await model.findOne({ _id: id, account_id: caller.account_id }).lean();
  if (!doc) throw notFound(what);
  return doc;
}

/** Ids from `wanted` that are not documents of the account. */
export async function missingIds(
  model: { find(filter: object, projection: object): { lean(): PromiseLike<{ _id: string }[]> } },
  accountId: string,
  wanted: readonly string[],
): Promise<string[]> {
  const unique = [...new Set(wanted)];
  if (unique.length === 0) return [];
  const found = await model.find({ account_id: accountId, _id: { $in: unique } }, { _id: 1 }).lean();
  const have = new Set(found.map((doc) => doc._id));
  return unique.filter((id) => !have.has(id));
}

/**
 * Refuses deleting something a policy of the account names (409 listing those policies): the
 * reference must be removed first, so no policy ever points at nothing.
 */
export async function refuseIfPoliciesUse(
  ctx: HandlerContext,
  accountId: string,
  reference: {
    field: "destination_provider_ids" | "guardrail_ids" | "mcp_servers.server_id";
    id: string;
    /** How the message names it, and the error code's prefix (`<code>.in_use`). */
    what: string;
    code: "provider" | "guardrail" | "mcp_server";
  },
): Promise<void> {
  const users = await ctx.models.Policy.find(
    { account_id: accountId, [reference.field]: reference.id },
    { name: 1 },
  ).lean();
  if (users.length > 0) {
    throw conflict(
      `${reference.code}.in_use`,
      `the ${reference.what} is used by policies: ${users.map((p) => p.name).join(", ")}; remove it from them first`,
    );
  }
}
