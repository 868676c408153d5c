import { AccountDeletedEvent, Events, QUEUE } from "@agentnet/contracts";
import { deleteAccountRows } from "../store/events";
import type { TelemetryContext } from "./context";

/**
 * Account deletion removes the account's access logs and usage. The event is a core NATS publish
 * (at most once): a telemetry that is down when it fires keeps the rows until retention sweeps
 * the logs; usage rows would stay, so a durable account event would be better (see README).
 */
export function registerAccountDeletion(ctx: TelemetryContext) {
  return ctx.nc.subscribe(Events.accountDeleted, {
    queue: QUEUE.telemetry,
    callback: (error, msg) => {
      if (error) {
        ctx.logger.error({ err: error }, "account deletion subscription failed");
        return;
      }
      let event: AccountDeletedEvent;
      try {
        event = AccountDeletedEvent.parse(msg.json());
      } catch (err) {
        ctx.logger.warn({ err }, "malformed account deletion event ignored");
        return;
      }
      deleteAccountRows(ctx.warehouse, event.account_id).then(
        () => ctx.logger.info({ account_id: event.account_id }, "account telemetry deleted"),
        (err: unknown) =>
          ctx.logger.error({ err, account_id: event.account_id }, "account telemetry delete failed"),
      );
    },
  });
}
