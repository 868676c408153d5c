import { z } from "zod";
import { AccessLogEntry } from "./access-logs";
import { Id } from "./common";
import { ReservedCounter } from "./consumption";

/**
 * What the gateway proxy publishes on JetStream for every request, allowed or denied. `id` is
 * the request id: it is the access-log id and the Nats-Msg-Id, so redelivery deduplicates.
 * Only add optional fields to version 1 (events already in flight lack them).
 */
export const GatewayRequestEvent = AccessLogEntry.extend({
  v: z.literal(1),
  account_id: Id,
  /** Log collection was on at request time: telemetry keeps an access-log row only then. */
  logged: z.boolean(),
  /**
   * No longer sent: events published before caps moved to leases named the consumption
   * reservation they settled. Kept optional so such events still parse.
   */
  reservation_id: z.string().min(1).optional(),
  /**
   * The counters the request counts on, capped ones with the proxy lease that admitted it: what
   * settlement counts usage on. Absent when no limit applies or the request was denied.
   */
  reserved_counters: z.array(ReservedCounter).optional(),
  /** The caller's email and name, kept so the log search can match them. */
  user_email: z.string(),
  user_name: z.string(),
});
export type GatewayRequestEvent = z.infer<typeof GatewayRequestEvent>;
