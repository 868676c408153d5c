import { consumeBatches, ensureAccountEventsStream, ensureDurableConsumer } from "@agentnet/bus";
import { ACCOUNT_EVENTS_STREAM, AccountDeletedEvent, Events } from "@agentnet/contracts";
import { deleteAccountRows } from "../store/events";
import type { TelemetryContext } from "./context";

/**
 * Account deletion removes the account's access logs and usage. The events are read from JetStream
 * with a durable consumer, so a telemetry that was down when an account was deleted deletes its
 * rows when it comes back; a delete that fails is retried.
 */
export async function followAccountDeletions(ctx: TelemetryContext, durable: string) {
  await ensureAccountEventsStream(ctx.nc);
  const consumer = await ensureDurableConsumer(ctx.nc, {
    durable,
    stream: ACCOUNT_EVENTS_STREAM,
    filterSubject: Events.accountDeleted,
  });
  const stopping = new AbortController();
  const running = consumeBatches(
    consumer,
    async (messages) => {
      for (const message of messages) {
        const parsed = AccountDeletedEvent.safeParse(parseJson(message.string()));
        if (!parsed.success) {
          ctx.logger.warn({ issues: parsed.error.issues }, "malformed account deletion event ignored");
          continue;
        }
        await deleteAccountRows(ctx.warehouse, parsed.data.account_id);
        ctx.logger.info({ account_id: parsed.data.account_id }, "account telemetry deleted");
      }
    },
    {
      maxMessages: 100,
      signal: stopping.signal,
      onError: (err) => ctx.logger.error({ err }, "account telemetry delete failed; will retry"),
    },
  );
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
