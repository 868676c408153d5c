import { publishEvent } from "@agentnet/bus";
import {
  type AccountDeletedEvent,
  agentNetworkOnlyError,
  auditActionOf,
  ControlPlane,
  Events,
  notFound,
  unprocessable,
} from "@agentnet/contracts";
import { handleChange, outcomeOf } from "../audit/changes";
import { actorOf } from "../audit/journal";
import { requireOwner, requireWriter } from "../domain/access";
import { applySettingsUpdate } from "../domain/accounts";
import { toAccount } from "../store/views";
import { announceConfigChange, type HandlerContext, handle, revokeCallers } from "./context";

export function registerAccountHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const loadOwnAccount = async (callerAccountId: string, accountId: string) => {
    // Another account's id is "not found", never "forbidden": existence does not leak.
    const account = accountId === callerAccountId ? await models.Account.findById(accountId).lean() : null;
    if (!account) throw notFound("account");
    return account;
  };

  handle(ctx, ControlPlane.accountsList, async ({ caller }) => {
    const account = await loadOwnAccount(caller.account_id, caller.account_id);
    return [toAccount(account)];
  });

  handleChange(
    ctx,
    ControlPlane.accountsUpdate,
    { id: (r) => r.account_id },
    async ({ caller, account_id, body }) => {
      const account = await loadOwnAccount(caller.account_id, account_id);
      requireWriter(caller);
      const problem = agentNetworkOnlyError(body.settings);
      if (problem) {
        throw unprocessable("account.agent_network_only", problem, [
          {
            path: "settings.dashboard_features.agent_network",
            message: "must be true when agent_network_only is enabled",
          },
        ]);
      }
      const updated = await models.Account.findOneAndUpdate(
        { _id: account._id },
        {
          $set: {
            settings: applySettingsUpdate(account.settings, body.settings),
            ...(body.onboarding ? { onboarding: body.onboarding } : {}),
          },
        },
        { new: true },
      ).lean();
      if (!updated) throw notFound("account");
      announceConfigChange(ctx, account._id);
      return toAccount(updated);
    },
  );

  handle(ctx, ControlPlane.accountsDelete, async ({ caller, account_id }) => {
    let account: Awaited<ReturnType<typeof loadOwnAccount>>;
    try {
      account = await loadOwnAccount(caller.account_id, account_id);
      requireOwner(caller);
    } catch (error) {
      // A refused deletion stays on the trail; a deletion made takes the trail with the account.
      await ctx.audit
        .record({
          account_id: caller.account_id,
          actor: actorOf(caller),
          action: auditActionOf(ControlPlane.accountsDelete),
          target: { type: "account", id: account_id },
          ...outcomeOf(error),
        })
        .catch((recordError: unknown) =>
          ctx.logger.error({ err: recordError }, "a refused account deletion could not be audited"),
        );
      throw error;
    }
    const byAccount = { account_id: account._id };
    await Promise.all([
      models.Token.deleteMany(byAccount),
      models.AgentCredential.deleteMany(byAccount),
      models.AgentAccessToken.deleteMany(byAccount),
      models.Session.deleteMany(byAccount),
      models.SignInAttempt.deleteMany(byAccount),
      models.IdentityProvider.deleteMany(byAccount),
      models.IdentityGrant.deleteMany(byAccount),
      models.User.deleteMany(byAccount),
      models.Group.deleteMany(byAccount),
      models.Settings.deleteMany(byAccount),
      models.Provider.deleteMany(byAccount),
      models.Policy.deleteMany(byAccount),
      models.Guardrail.deleteMany(byAccount),
      models.McpServer.deleteMany(byAccount),
      models.McpUserCredential.deleteMany(byAccount),
      models.BudgetRule.deleteMany(byAccount),
      // The trail goes with the account: no one is left who may read it.
      models.AuditEntry.deleteMany(byAccount),
      models.AuditIntent.deleteMany(byAccount),
      models.NotificationSettings.deleteMany(byAccount),
      models.NotificationDelivery.deleteMany(byAccount),
    ]);
    await models.Account.deleteOne({ _id: account._id });
    await revokeCallers(ctx, account._id, { wholeAccount: true });
    const event: AccountDeletedEvent = {
      v: 1,
      account_id: account._id,
      deleted_at: new Date().toISOString(),
    };
    // Durable (JetStream): services that are down now still delete the account's data later.
    await publishEvent(ctx.nc, Events.accountDeleted, event, `account-deleted:${account._id}`);
    announceConfigChange(ctx, account._id);
    ctx.logger.info({ account_id: account._id }, "account deleted");
    return {};
  });
}
