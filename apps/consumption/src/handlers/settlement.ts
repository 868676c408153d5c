import { consumeBatches, ensureDurableConsumer } from "@agentnet/bus";
import { GatewayRequestEvent } from "@agentnet/contracts";
import type { JsMsg } from "@nats-io/jetstream";
import { actualOf, outcomeOfEvent } from "../domain/settlement";
import type { HandlerContext } from "./context";

export interface SettlementOptions {
  durable: string;
  /** Tests start at the stream's end; a service starts at its beginning and resumes where it stopped. */
  deliverNew: boolean;
  ackWaitMs: number;
}

const decode = (message: JsMsg): GatewayRequestEvent | undefined => {
  try {
    const parsed = GatewayRequestEvent.safeParse(message.json());
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/** Settles (or releases) the reservation of each event of a batch; events without one count nothing. */
export async function settleEvents(ctx: HandlerContext, events: GatewayRequestEvent[]) {
  await Promise.all(
    events.map(async (event) => {
      if (!event.reservation_id) return;
      const result = await ctx.reservations.settle(
        event.account_id,
        event.reservation_id,
        outcomeOfEvent(event),
        event.id,
        actualOf(event),
      );
      if (result === "unknown" || result === "ignored") {
        ctx.logger.debug({ event_id: event.id, reservation_id: event.reservation_id, result }, "not settled");
      }
    }),
  );
}

/** Starts consuming request events; resolves once the consumer exists with the loop (ends on `signal`). */
export async function startSettlement(ctx: HandlerContext, options: SettlementOptions, signal: AbortSignal) {
  // One durable shared by every replica: JetStream hands each event to one of them, and an event is
  // acked only after its settlement was written, so a crash means redelivery, never loss.
  const consumer = await ensureDurableConsumer(ctx.nc, {
    durable: options.durable,
    deliver: options.deliverNew ? "new" : "all",
    ackWaitMs: options.ackWaitMs,
  });
  const loop = consumeBatches(
    consumer,
    async (messages) => {
      const events: GatewayRequestEvent[] = [];
      for (const message of messages) {
        const event = decode(message);
        // A malformed event can never settle; acking it keeps it from blocking the stream.
        if (event) events.push(event);
        else ctx.logger.warn({ seq: message.seq }, "skipping an event that is not a GatewayRequestEvent");
      }
      await settleEvents(ctx, events);
    },
    {
      maxMessages: 256,
      signal,
      onError: (err) => ctx.logger.error({ err }, "settling a batch failed; it will be redelivered"),
    },
  );
  return { loop };
}
