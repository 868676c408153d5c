import { type AccountDeletedEvent, ControlPlane, Events, notFound } from "@agentnet/contracts";
import { requireOwner, requireWriter } from "../domain/access";
import { applySettingsUpdate } from "../domain/accounts";
import { toAccount } from "../store/views";
import { announceConfigChange, type HandlerContext, handle } from "./context";

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

  handle(ctx, ControlPlane.accountsUpdate, async ({ caller, account_id, body }) => {
    const account = await loadOwnAccount(caller.account_id, account_id);
    requireWriter(caller);
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
  });

  handle(ctx, ControlPlane.accountsDelete, async ({ caller, account_id }) => {
    const account = await loadOwnAccount(caller.account_id, account_id);
    requireOwner(caller);
    await Promise.all([
      models.Token.deleteMany({ account_id: account._id }),
      models.User.deleteMany({ account_id: account._id }),
      models.Group.deleteMany({ account_id: account._id }),
    ]);
    await models.Account.deleteOne({ _id: account._id });
    const event: AccountDeletedEvent = {
      v: 1,
      account_id: account._id,
      deleted_at: new Date().toISOString(),
    };
    ctx.nc.publish(Events.accountDeleted, JSON.stringify(event));
    announceConfigChange(ctx, account._id);
    ctx.logger.info({ account_id: account._id }, "account deleted");
    return {};
  });
}
