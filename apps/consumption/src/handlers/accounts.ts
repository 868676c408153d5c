import { consumeBatches, ensureAccountEventsStream, ensureDurableConsumer } from "@agentnet/bus";
import { ACCOUNT_EVENTS_STREAM, AccountDeletedEvent, Events } from "@agentnet/contracts";
import { deleteAccountData } from "../store/maintenance";
import type { HandlerContext } from "./context";

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * agn.account.deleted: drop the account's counters, reservations and outcomes. Read from JetStream
 * with a durable consumer (`<durable>-accounts`), so a consumption that was down when an account was
 * deleted still deletes its data; a failed delete is retried. The replica that deletes also forgets
 * its cached heads; another replica's cache expires within minutes and only matters if the deleted
 * account kept sending requests.
 */
export async function followAccountDeletions(
  ctx: HandlerContext,
  options: { durable: string; deliverNew: boolean },
  signal: AbortSignal,
) {
  await ensureAccountEventsStream(ctx.nc);
  const consumer = await ensureDurableConsumer(ctx.nc, {
    durable: `${options.durable}-accounts`,
    stream: ACCOUNT_EVENTS_STREAM,
    filterSubject: Events.accountDeleted,
    deliver: options.deliverNew ? "new" : "all",
  });
  const loop = consumeBatches(
    consumer,
    async (messages) => {
      for (const message of messages) {
        const parsed = AccountDeletedEvent.safeParse(parseJson(message.string()));
        if (!parsed.success) {
          ctx.logger.warn({ issues: parsed.error.issues }, "malformed account deletion event ignored");
          continue;
        }
        await deleteAccountData(ctx.models, ctx.ledger, parsed.data.account_id);
        ctx.logger.info({ account_id: parsed.data.account_id }, "account consumption deleted");
      }
    },
    {
      maxMessages: 100,
      signal,
      onError: (err) => ctx.logger.error({ err }, "deleting account consumption failed; will retry"),
    },
  );
  return { loop };
}
