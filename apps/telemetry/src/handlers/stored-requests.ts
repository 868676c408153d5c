import { type NatsConnection, serve } from "@agentnet/bus";
import { QUEUE, REQUESTS_STREAM, TelemetryIngest } from "@agentnet/contracts";
import { jetstreamManager } from "@nats-io/jetstream";
import { storedRequestIds } from "../store/stored-requests";
import type { TelemetryContext } from "./context";

/** How long an answer may wait for the ingest to catch up before it says "ask again". */
const CATCH_UP_WAIT_MS = 2_000;
const CATCH_UP_POLL_MS = 100;

/**
 * Answers proxies asking whether events they published long ago (their acks lost, an outage longer
 * than the stream's duplicate window since) were stored. Telemetry writes every event of the stream
 * into usage_events before acking it, so once its consumer has acked everything the stream held
 * when the question came, an id absent from usage_events was never stored.
 */
export function serveStoredRequests(ctx: TelemetryContext, durable: string) {
  return serve(
    ctx.nc,
    TelemetryIngest.storedRequests,
    async ({ requests }) => {
      if (!(await ingestCaughtUp(ctx.nc, durable))) return { decided: false, stored: [] };
      const times = requests.map((request) => Date.parse(request.timestamp));
      const rows = await storedRequestIds.run(ctx.warehouse, {
        accounts: [...new Set(requests.map((request) => request.account_id))],
        ids: requests.map((request) => request.id),
        from: new Date(Math.min(...times)),
        to: new Date(Math.max(...times)),
      });
      return { decided: true, stored: rows.map((row) => row.id) };
    },
    {
      queue: QUEUE.telemetry,
      onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "stored check failed"),
    },
  );
}

/** Whether the ingest has acked every message the stream held now, waiting up to CATCH_UP_WAIT_MS. */
async function ingestCaughtUp(nc: NatsConnection, durable: string): Promise<boolean> {
  const jsm = await jetstreamManager(nc);
  const lastSeq = (await jsm.streams.info(REQUESTS_STREAM)).state.last_seq;
  const deadline = Date.now() + CATCH_UP_WAIT_MS;
  for (;;) {
    const info = await jsm.consumers.info(REQUESTS_STREAM, durable);
    const idle = info.num_pending === 0 && info.num_ack_pending === 0;
    if (idle || info.ack_floor.stream_seq >= lastSeq) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
  }
}
