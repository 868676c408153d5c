import type { NatsConnection } from "@agentnet/bus";
import { REQUESTS_STREAM } from "@agentnet/contracts";
import { AckPolicy, type Consumer, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nanos = (ms: number) => ms * 1_000_000;

export interface ConsumerOptions {
  durable: string;
  /** Defaults to every request event; a narrower subject lets a test read only its own accounts. */
  filterSubject?: string;
  /** "all" replays the stream (a new production consumer catches up); "new" starts at creation. */
  deliver: "all" | "new";
  ackWaitMs: number;
  maxAckPending: number;
  /** Removes the consumer after this long without a client: for throwaway (test, bench) consumers. */
  inactiveThresholdMs?: number;
}

/**
 * `ensureDurableConsumer` from @agentnet/bus with what it lacks here: a filter subject, a start
 * policy and an inactivity threshold. Local until packages/bus grows these options.
 */
export async function ensureTelemetryConsumer(
  nc: NatsConnection,
  options: ConsumerOptions,
): Promise<Consumer> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(REQUESTS_STREAM, {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: options.deliver === "all" ? DeliverPolicy.All : DeliverPolicy.New,
    ack_wait: nanos(options.ackWaitMs),
    max_ack_pending: options.maxAckPending,
    ...(options.filterSubject === undefined ? {} : { filter_subject: options.filterSubject }),
    ...(options.inactiveThresholdMs === undefined
      ? {}
      : { inactive_threshold: nanos(options.inactiveThresholdMs) }),
  });
  return (await jetstream(nc)).consumers.get(REQUESTS_STREAM, options.durable);
}

/** Deletes a durable consumer (tests and benchmarks clean up theirs). */
export async function deleteConsumer(nc: NatsConnection, durable: string) {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.delete(REQUESTS_STREAM, durable);
}
