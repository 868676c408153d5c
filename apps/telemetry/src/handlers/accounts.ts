import { followAccountDeletions as follow } from "@agentnet/bus";
import { deleteAccountRows } from "../store/events";
import type { TelemetryContext } from "./context";

/**
 * Account deletion removes the account's access logs and usage, durably (see
 * `followAccountDeletions` in @agentnet/bus): a telemetry that was down when an account was deleted
 * deletes its rows when it comes back, and a delete that fails is retried.
 */
export async function followAccountDeletions(ctx: TelemetryContext, durable: string) {
  const stopping = new AbortController();
  const running = follow(ctx.nc, {
    durable,
    signal: stopping.signal,
    deleteAccount: async (accountId) => {
      await deleteAccountRows(ctx.warehouse, accountId);
      ctx.logger.info({ account_id: accountId }, "account telemetry deleted");
    },
    onMalformed: (issues) => ctx.logger.warn({ issues }, "malformed account deletion event ignored"),
    onError: (err) => ctx.logger.error({ err }, "account telemetry delete failed; will retry"),
  }).catch((err: unknown) => ctx.logger.error({ err }, "following account deletions stopped"));
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
