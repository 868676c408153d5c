import type { Handler } from "@agentnet/bus";
import {
  AppError,
  type AuditTarget,
  auditActionOf,
  auditTargetTypeOf,
  type Caller,
  type Endpoint,
} from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import type { z } from "zod";
import { type HandlerContext, handle } from "../handlers/context";
import { actorOf, type Pending, type Settled } from "./journal";

/** How a changing endpoint names its target. */
export interface ChangeTarget<E extends Endpoint> {
  /** The target's id from the request; absent for what an account has one of (settings). */
  id?: (request: z.output<E["request"]>) => string;
}

/** A handler that creates its target under the id the audit trail chose for it. */
export type CreateHandler<E extends Endpoint> = (
  request: z.output<E["request"]>,
  msg: Parameters<Handler<E>>[1],
  id: string,
) => ReturnType<Handler<E>>;

/**
 * The stored document a target is, as the store holds it (secrets sealed or hashed; the entry
 * shows only whether they changed), or undefined when there is none.
 */
export async function loadTarget(
  ctx: Pick<HandlerContext, "models">,
  accountId: string,
  target: AuditTarget,
): Promise<unknown> {
  const { models } = ctx;
  const owned = target.id === undefined ? undefined : { _id: target.id, account_id: accountId };
  const byAccount = { account_id: accountId };
  const found = await (() => {
    switch (target.type) {
      case "account":
        return models.Account.findById(accountId).lean();
      case "settings":
        return models.Settings.findOne(byAccount).lean();
      case "notification_settings":
        return models.NotificationSettings.findOne(byAccount).lean();
      case "user":
        return owned && models.User.findOne(owned).lean();
      case "group":
        return owned && models.Group.findOne(owned).lean();
      case "token":
        return owned && models.Token.findOne(owned).lean();
      case "budget_rule":
        return owned && models.BudgetRule.findOne(owned).lean();
      case "provider":
        return owned && models.Provider.findOne(owned).lean();
      case "policy":
        return owned && models.Policy.findOne(owned).lean();
      case "guardrail":
        return owned && models.Guardrail.findOne(owned).lean();
      case "mcp_server":
        return owned && models.McpServer.findOne(owned).lean();
      case "mcp_user_credential":
        return owned && models.McpUserCredential.findOne(owned).lean();
      case "agent_credential":
        return owned && models.AgentCredential.findOne(owned).lean();
      case "identity_provider":
        return models.IdentityProvider.findById(accountId).lean();
      case "session":
        return owned && models.Session.findOne(owned).lean();
      case "audit_settings":
        return models.AuditSettings.findOne(byAccount).lean();
      default:
        return undefined;
    }
  })();
  return found ?? undefined;
}

/** How a change that threw ended: refused when the caller may not make it (401, 403), else failed. */
export const outcomeOf = (error: unknown): Settled => {
  if (!(error instanceof AppError)) return { outcome: "failed", status: 500 };
  const refused = error.status === 401 || error.status === 403;
  return { outcome: refused ? "refused" : "failed", status: error.status, error_code: error.code };
};

/**
 * Serves an endpoint that changes configuration, with its audit entry: the target is read and the
 * change's intent stored before the handler runs (a store that cannot take the intent refuses the
 * change), the entry appended after it with the target as stored then, whether the handler
 * succeeded or failed. A process that stops between the change and the entry leaves the intent,
 * which recovery turns into an `interrupted` entry.
 */
export function handleChange<E extends Endpoint>(
  ctx: HandlerContext,
  endpoint: E,
  target: ChangeTarget<E>,
  handler: Handler<E>,
): void {
  serveChange(ctx, endpoint, { creates: false, idOf: (request) => target.id?.(request) }, handler);
}

/**
 * Serves an endpoint that creates a target, as `handleChange` does: the new target's id is chosen
 * before the change and named in its intent, so a create interrupted before its entry still says
 * what it created.
 */
export function handleCreate<E extends Endpoint>(
  ctx: HandlerContext,
  endpoint: E,
  handler: CreateHandler<E>,
): void {
  serveChange(ctx, endpoint, { creates: true, idOf: () => newId() }, handler);
}

function serveChange<E extends Endpoint, Id extends string | undefined>(
  ctx: HandlerContext,
  endpoint: E,
  { creates, idOf }: { creates: boolean; idOf: (request: z.output<E["request"]>) => Id },
  handler: (
    request: z.output<E["request"]>,
    msg: Parameters<Handler<E>>[1],
    id: Id,
  ) => ReturnType<Handler<E>>,
): void {
  const action = auditActionOf(endpoint);
  const type = auditTargetTypeOf(action);
  if (!type)
    throw new Error(
      `${action} changes nothing the audit trail knows: add its collection to TARGET_OF_COLLECTION`,
    );
  handle(ctx, endpoint, async (request, msg) => {
    const { caller } = request as { caller: Caller };
    const id = idOf(request);
    return auditedChange(
      ctx,
      {
        account_id: caller.account_id,
        actor: actorOf(caller),
        action,
        target: { type, ...(id === undefined ? {} : { id }) },
        creates,
      },
      () => handler(request, msg, id),
    );
  });
}

/**
 * Makes one change (`run`) with its audit entry: the target read and the change's intent stored
 * before it runs (a store that cannot take the intent refuses the change), the entry appended after
 * it with the target as stored then, whether it succeeded or failed. A create (`creates`) that
 * failed made nothing: its entry names no id of a target that never was. Answers what `run` did.
 */
export async function auditedChange<T>(
  ctx: HandlerContext,
  change: Omit<Pending, "id" | "at" | "before"> & { creates: boolean },
  run: () => Promise<T> | T,
): Promise<T> {
  const { creates, ...named } = change;
  const before = await loadTarget(ctx, named.account_id, named.target);
  const pending = await ctx.audit.begin({ ...named, before });
  let result: T;
  try {
    result = await run();
  } catch (error) {
    const after = await loadTarget(ctx, named.account_id, named.target).catch(() => before);
    const madeNothing = creates && after === undefined;
    await ctx.audit.settle(
      madeNothing ? { ...pending, target: { type: named.target.type } } : pending,
      outcomeOf(error),
      after,
    );
    throw error;
  }
  ctx.faults.beforeAuditEntry(named.action);
  await ctx.audit.settle(
    pending,
    { outcome: "succeeded" },
    await loadTarget(ctx, named.account_id, named.target),
  );
  return result;
}
