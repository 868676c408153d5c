import { ACCOUNT_EVENTS_STREAM, AccountDeletedEvent, Events } from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";
import { consumeBatches, ensureAccountEventsStream, ensureDurableConsumer } from "./jetstream";
import { jsonOrUndefined } from "./json";

export interface AccountDeletionOptions {
  /** The service's own durable consumer on the account events stream. */
  durable: string;
  /** "new" for throwaway (test) consumers that must not replay other runs' deletions. */
  deliver?: "all" | "new";
  signal: AbortSignal;
  /** Deletes one account's data; a rejection is retried on redelivery. */
  deleteAccount: (accountId: string) => Promise<void>;
  onMalformed: (issues: unknown) => void;
  onError: (error: unknown) => void;
}

/**
 * Follows `agn.account.deleted` with a durable JetStream consumer, so a service that was down when
 * an account was deleted still deletes that account's data when it comes back. Resolves when
 * `signal` aborts and the batch in hand is done.
 */
export async function followAccountDeletions(
  nc: NatsConnection,
  options: AccountDeletionOptions,
): Promise<void> {
  await ensureAccountEventsStream(nc);
  const consumer = await ensureDurableConsumer(nc, {
    durable: options.durable,
    stream: ACCOUNT_EVENTS_STREAM,
    filterSubject: Events.accountDeleted,
    deliver: options.deliver ?? "all",
  });
  return consumeBatches(
    consumer,
    async (messages) => {
      for (const message of messages) {
        const parsed = AccountDeletedEvent.safeParse(jsonOrUndefined(message.string()));
        if (parsed.success) await options.deleteAccount(parsed.data.account_id);
        else options.onMalformed(parsed.error.issues);
      }
    },
    { maxMessages: 100, signal: options.signal, onError: options.onError },
  );
}
