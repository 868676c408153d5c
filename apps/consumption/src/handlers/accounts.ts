import { followAccountDeletions as follow } from "@agentnet/bus";
import type { HandlerContext } from "./context";

/**
 * agn.account.deleted: drop the account's counters (durably, see `followAccountDeletions` in
 * @agentnet/bus; consumer `<durable>-accounts`, pulled by the leading replica only).
 */
export const followAccountDeletions = (
  ctx: HandlerContext,
  options: { durable: string; deliverNew: boolean },
  signal: AbortSignal,
) =>
  follow(ctx.nc, {
    durable: `${options.durable}-accounts`,
    deliver: options.deliverNew ? "new" : "all",
    signal,
    deleteAccount: async (accountId) => {
      await ctx.keeper.deleteAccount(accountId);
      ctx.logger.info({ account_id: accountId }, "account consumption deleted");
    },
    onMalformed: (issues) => ctx.logger.warn({ issues }, "malformed account deletion event ignored"),
    onError: (err) => ctx.logger.error({ err }, "deleting account consumption failed; will retry"),
  });
