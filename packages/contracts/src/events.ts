import { z } from "zod";
import { AccessLogEntry } from "./access-logs";
import { type Caller, Id, Timestamp } from "./common";
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
   * Not sent by this proxy: the consumption reservation an event of an older build settled, before
   * caps were decided on leases. Optional so such events, still in the stream, parse.
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

/** The sha256 (hex) of an API token: what the bus carries instead of the token (`hashToken`). */
export const TokenHash = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * Callers that proxies and api-gateways must stop serving from their caches: a user blocked,
 * deleted, or with a changed role, groups or name; a token deleted; an account deleted. The
 * control-plane answers the change only after the NATS server took this event (see
 * `announceCallerRevocation` in packages/bus). Only add optional fields to version 1.
 */
export const CallersRevokedEvent = z.object({
  v: z.literal(1),
  account_id: Id,
  /** Every caller of the account (the account is gone, or a group left all its members). */
  whole_account: z.boolean(),
  user_ids: z.array(Id),
  token_hashes: z.array(TokenHash),
  at: Timestamp,
});
export type CallersRevokedEvent = z.infer<typeof CallersRevokedEvent>;

/** Whether a caller cached for the token with hash `tokenHash` may no longer be served. */
export const revokesCaller = (event: CallersRevokedEvent, caller: Caller, tokenHash: string): boolean =>
  caller.account_id === event.account_id &&
  (event.whole_account || event.user_ids.includes(caller.user_id) || event.token_hashes.includes(tokenHash));
