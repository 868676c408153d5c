import { type DurableConsumerOptions, ensureDurableConsumer, startEventSpans } from "@agentnet/bus";
import { GatewayRequestEvent } from "@agentnet/contracts";
import type { JsMsg } from "@nats-io/jetstream";
import type { IngestBacklog } from "../metrics";
import { BatchWriter } from "../store/batch-writer";
import { insertEvents } from "../store/events";
import { refreshRolledHours } from "../store/rollup";
import type { TelemetryContext } from "./context";

export interface IngestOptions extends DurableConsumerOptions {
  batchSize: number;
  flushIntervalMs: number;
}

interface Pending {
  msg: JsMsg;
  event: GatewayRequestEvent;
}

/** Delay before a failed batch is redelivered, so a warehouse hiccup is not hammered. */
const RETRY_DELAY_MS = 2_000;

function decode(msg: JsMsg): GatewayRequestEvent | { error: string } {
  let payload: unknown;
  try {
    payload = msg.json();
  } catch {
    return { error: "not JSON" };
  }
  const parsed = GatewayRequestEvent.safeParse(payload);
  return parsed.success ? parsed.data : { error: parsed.error.message };
}

/**
 * Consumes gateway request events into the warehouse. Each message is acked only after the batch
 * holding it is written and the rolled hours it wrote into are recomputed; a failed write
 * naks the batch for redelivery (the tables collapse repeats by request id). A malformed event can
 * never succeed, so it is logged and terminated rather than redelivered forever.
 */
export async function startIngest(ctx: TelemetryContext, options: IngestOptions) {
  const consumer = await ensureDurableConsumer(ctx.nc, options);
  const writer = new BatchWriter<Pending>({
    maxItems: options.batchSize,
    maxDelayMs: options.flushIntervalMs,
    write: async (batch) => {
      const spans = startEventSpans(ctx.nc, "store", "agn.requests", batch, (item) => item.msg.headers);
      try {
        const events = batch.map((item) => item.event);
        await insertEvents(ctx.warehouse, events);
        await refreshRolledHours(ctx.warehouse, events);
        for (const item of batch) item.msg.ack();
        ctx.metrics?.ingested(batch.length);
        spans?.end();
      } catch (error) {
        spans?.end(error);
        ctx.logger.error(
          { err: error, events: batch.length },
          "telemetry insert failed; batch will be redelivered",
        );
        for (const item of batch) item.msg.nak(RETRY_DELAY_MS);
        ctx.metrics?.ingestFailed();
      }
    },
  });
  // Room for the batch being written and the one filling behind it.
  const messages = await consumer.consume({ max_messages: options.batchSize * 2 });
  const loop = (async () => {
    for await (const msg of messages) {
      const decoded = decode(msg);
      if ("error" in decoded) {
        ctx.logger.warn(
          { subject: msg.subject, seq: msg.seq, reason: decoded.error },
          "malformed request event dropped",
        );
        msg.term();
        continue;
      }
      await writer.add({ msg, event: decoded });
    }
  })();
  return {
    /** Writes and acks what is buffered (tests call it to make ingested rows queryable). */
    flush: () => writer.flush(),
    /** What JetStream says the consumer has yet to deliver, and to have acked. */
    async backlog(): Promise<IngestBacklog> {
      const info = await consumer.info();
      return { undelivered: info.num_pending, unacked: info.num_ack_pending };
    },
    /** Stops pulling, then writes and acks what was already pulled. */
    async stop() {
      await messages.close();
      await loop;
      await writer.flush();
    },
  };
}
