import { consumeBatches, ensureDurableConsumer, forEachInSlices, startEventSpans } from "@agentnet/bus";
import { GatewayRequestEvent, REQUESTS_STREAM } from "@agentnet/contracts";
import { type JsMsg, jetstreamManager } from "@nats-io/jetstream";
import type { HandlerContext } from "./context";
import { pause } from "./pause";

export interface SettlementOptions {
  durable: string;
  /** Tests start at the stream's end; a service starts at its beginning and resumes where it stopped. */
  deliverNew: boolean;
  ackWaitMs: number;
  clock: () => number;
  /** A new term loaded from the store (not one resumed with its book after a NATS outage). */
  takingOver: boolean;
}

const decode = (message: JsMsg): GatewayRequestEvent | undefined => {
  try {
    const parsed = GatewayRequestEvent.safeParse(message.json());
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/** Stream positions kept waiting for the ack floor (`settledThrough`): a few minutes of sweeps. */
const MAX_LOOKS = 600;

/** How long one fetch gathers events (`consumeBatches`): a redelivered event may wait that long more. */
const FETCH_EXPIRES_MS = 1_000;

/**
 * Consumes request events and settles their usage, batch by batch: a batch is acked only
 * after its usage was journaled, so a crash means redelivery (recognised by event id), never loss.
 * Resolves once the consumer exists, with the loop (ends on `signal`).
 */
export async function startSettlement(
  ctx: HandlerContext,
  options: SettlementOptions & { onError: (error: unknown) => void },
  signal: AbortSignal,
) {
  // One durable shared by every replica; only the leading replica pulls from it.
  const consumer = await ensureDurableConsumer(ctx.nc, {
    durable: options.durable,
    deliver: options.deliverNew ? "new" : "all",
    ackWaitMs: options.ackWaitMs,
  });
  // Before this leader's first fetch, whatever is pending was fetched by an earlier one. (A term
  // resumed after a NATS outage journaled what it had fetched: its book counts it.)
  if (options.takingOver && (await consumer.info()).num_ack_pending > 0) {
    ctx.keeper.awaitRedelivery(options.clock() + options.ackWaitMs + FETCH_EXPIRES_MS);
  }
  const loop = consumeBatches(
    consumer,
    async (messages) => {
      const spans = startEventSpans(ctx.nc, "settle", "agn.requests", messages, (message) => message.headers);
      const events: GatewayRequestEvent[] = [];
      // In slices: leases are granted on this loop and must not wait for a whole batch.
      await forEachInSlices(messages, (message) => {
        const event = decode(message);
        // A malformed event can never settle; acking it keeps it from blocking the stream.
        if (event) events.push(event);
        else ctx.logger.warn({ seq: message.seq }, "skipping an event that is not a GatewayRequestEvent");
      });
      try {
        await ctx.keeper.settle(events);
      } catch (error) {
        spans?.end(error);
        throw error;
      }
      spans?.end();
      ctx.metrics?.settled(events, Date.now());
      ctx.admissions.accounted(events.map((event) => event.id));
      ctx.alerts.settled(events);
    },
    { maxMessages: 1_000, expiresMs: FETCH_EXPIRES_MS, signal, onError: options.onError },
  );
  /** Stream positions looked at (oldest first), each with when: settled through once acked up to it. */
  const looks: { at: number; lastSeq: number }[] = [];
  let settledUntil = Number.NEGATIVE_INFINITY;
  /**
   * The latest moment (at most `now`, the caller's clock) such that every event the stream held
   * then is settled: looks at the stream's last sequence now, and takes the latest earlier look the
   * durable's ack floor has reached (it takes every subject). While JetStream does not answer
   * (quorum lost, or streams re-electing their leaders after a node's loss), it stays where it was:
   * what the stream holds and this leader has not settled is usage no counter has.
   */
  const settledThrough = async (now: number): Promise<number> => {
    try {
      // No API check: it would be one more request per look, and the looks below fail alike.
      const jsm = await jetstreamManager(ctx.nc, { checkAPI: false });
      looks.push({ at: now, lastSeq: (await jsm.streams.info(REQUESTS_STREAM)).state.last_seq });
      const ackFloor = (await consumer.info()).ack_floor.stream_seq;
      while (looks.length > 0 && (looks[0]?.lastSeq ?? Number.POSITIVE_INFINITY) <= ackFloor) {
        settledUntil = Math.max(settledUntil, looks.shift()?.at ?? settledUntil);
      }
      // A look the floor never reaches (a stuck event) must not grow the list without end.
      if (looks.length > MAX_LOOKS) looks.splice(0, looks.length - MAX_LOOKS);
    } catch (err) {
      ctx.logger.debug({ err }, "cannot see the settlement of the stream now");
    }
    return settledUntil;
  };
  return {
    loop,
    settledThrough,
    /**
     * Resolves true once every event the stream holds now is settled (`settledThrough` reaches
     * now), looking every `pollMs`; false if `until` ended the wait first.
     */
    async settledThroughNow(pollMs: number, until: AbortSignal): Promise<boolean> {
      const from = options.clock();
      while (!until.aborted) {
        if ((await settledThrough(options.clock())) >= from) return true;
        await pause(pollMs, until);
      }
      return false;
    },
  };
}
