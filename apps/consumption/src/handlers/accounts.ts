import { followAccountDeletions as follow } from "@agentnet/bus";
import { deleteAccountData } from "../store/maintenance";
import type { HandlerContext } from "./context";

/**
 * agn.account.deleted: drop the account's counters, reservations and outcomes (durably, see
 * `followAccountDeletions` in @agentnet/bus; consumer `<durable>-accounts`). The replica that
 * deletes also forgets its cached heads; another replica's cache expires within minutes and only
 * matters if the deleted account kept sending requests.
 */
export async function followAccountDeletions(
  ctx: HandlerContext,
  options: { durable: string; deliverNew: boolean },
  signal: AbortSignal,
) {
  const loop = follow(ctx.nc, {
    durable: `${options.durable}-accounts`,
    deliver: options.deliverNew ? "new" : "all",
    signal,
    deleteAccount: async (accountId) => {
      await deleteAccountData(ctx.models, ctx.ledger, accountId);
      ctx.logger.info({ account_id: accountId }, "account consumption deleted");
    },
    onMalformed: (issues) => ctx.logger.warn({ issues }, "malformed account deletion event ignored"),
    onError: (err) => ctx.logger.error({ err }, "deleting account consumption failed; will retry"),
  });
  return { loop };
}
