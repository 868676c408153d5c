import { z } from "zod";
import { Id, Timestamp } from "./common";
import { ConsumptionCounters, DimensionKind, ReservedCounter } from "./consumption";
import { byCaller, endpoint } from "./subjects";

/** Deny reasons of a cap decision, as the access log's deny_reason carries them. */
export const CapDenyReason = z.enum([
  "llm_policy.token_cap_exceeded",
  "llm_policy.budget_cap_exceeded",
  "budget_rule.token_cap_exceeded",
  "budget_rule.budget_cap_exceeded",
  "llm_policy.tool_call_cap_exceeded",
  "budget_rule.tool_call_cap_exceeded",
]);
export type CapDenyReason = z.infer<typeof CapDenyReason>;

/** An amount in counter units: total tokens (input + output), nano-USD and MCP tool calls (integers). */
export const Quantity = z.object({
  tokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  cost_nanos: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  // Absent from a proxy or leader that counts no tool calls (one that runs an earlier release).
  calls: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
});
export type Quantity = z.infer<typeof Quantity>;

/**
 * One counter a proxy wants headroom on. `committed` is what the proxy has spent and still holds
 * against its current lease (`counter.lease_id`), `need` what it must add now (0 to renew). When
 * the leader does not know that lease (it expired, or another leader granted it) it grants a new
 * one that covers `need` alone, and the proxy starts over on it.
 */
export const LeaseAsk = z.object({
  counter: ReservedCounter,
  /** The tightest caps of the counter in the proxy's configuration; an absent measure is uncapped. */
  cap_tokens: z.number().int().min(1).optional(),
  cap_cost_nanos: z.number().int().min(1).optional(),
  cap_calls: z.number().int().min(1).optional(),
  committed: Quantity,
  need: Quantity,
  /** Give back what is not committed: the proxy already stopped admitting beyond `committed`. */
  shrink: z.boolean().optional(),
});
export type LeaseAsk = z.infer<typeof LeaseAsk>;

/** agn.consumption.lease: a proxy asks for (more) headroom on some counters, all or nothing. */
export const LeaseRequest = z.object({
  account_id: Id,
  /** The asking proxy process: leases are per (proxy, counter). */
  proxy_id: Id,
  asks: z.array(LeaseAsk).min(1).max(256),
});
export type LeaseRequest = z.infer<typeof LeaseRequest>;

/** The leader's answer for one ask, in the asks' order. */
export const LeaseGrant = z.object({
  /** Absent when nothing is leased (a refused first ask). */
  lease_id: z.string().optional(),
  /** The lease's whole grant: the proxy may commit up to this much on the counter. */
  granted: Quantity,
  /** Whether `committed + need` fits in the grant. */
  fits: z.boolean(),
  /** Usage already settled in the counter: the proxy tells a full cap from one held by others. */
  used: Quantity,
});
export type LeaseGrant = z.infer<typeof LeaseGrant>;

export const LeaseReply = z.object({
  grants: z.array(LeaseGrant),
  /** How long the grants last from when the ask was sent, unless renewed. */
  ttl_ms: z.number().int().min(1),
});
export type LeaseReply = z.infer<typeof LeaseReply>;

/**
 * One cap that applies to the caller, in its current window: the limit, what is used (settled),
 * what is held (headroom leased to gateway proxies for requests in flight; unused headroom returns
 * within seconds) and what remains. Tokens are input + output; amounts in USD for `usd`.
 */
export const CapStatus = z.object({
  source: z.enum(["llm_policy", "budget_rule"]),
  /** The policy or budget rule that sets the cap, and its name. */
  source_id: Id,
  source_name: z.string(),
  /** `tool_calls`: MCP tool calls (an agentnet extension, as `tool_call_limit`). */
  measure: z.enum(["tokens", "usd", "tool_calls"]),
  dimension_kind: DimensionKind,
  dimension_id: Id,
  window_seconds: z.number().int().min(1),
  window_start_utc: Timestamp,
  limit: z.number().min(0),
  used: z.number().min(0),
  held: z.number().min(0),
  remaining: z.number().min(0),
});
export type CapStatus = z.infer<typeof CapStatus>;

/** Consumption: counters and leases of cap headroom. */
export const Consumption = {
  lease: endpoint("agn.consumption.lease", LeaseRequest, LeaseReply),
  list: endpoint("agn.consumption.list", byCaller({}), ConsumptionCounters),
  /** The caps that apply to the caller (every policy covering their groups, every rule targeting them). */
  caps: endpoint("agn.consumption.caps", byCaller({}), z.array(CapStatus)),
} as const;

/**
 * `agn.consumption.leader`: every second, the leading consumption replica says on which subject
 * its lease endpoint answers: `agn.consumption.lease.<term>`, a subject of this leadership term
 * alone. Proxies address their lease requests there, so a frozen ex-leader (still subscribed to
 * the shared queue subject until NATS drops it) gets none of them once a new leader speaks.
 */
export const CONSUMPTION_LEADER_SUBJECT = "agn.consumption.leader";
export const ConsumptionLeaderAnnouncement = z.object({
  v: z.literal(1),
  lease_subject: z.string().startsWith("agn.consumption.lease."),
  at: Timestamp,
  /**
   * Counter ids (`chainId`) on which the leader just refused an ask while other proxies' leases
   * held part of the headroom: each proxy gives back what it holds there and has not committed.
   * Optional: the announcement made every second names none (and older leaders never do).
   */
  reclaim: z.array(z.string()).max(64).optional(),
});
export type ConsumptionLeaderAnnouncement = z.infer<typeof ConsumptionLeaderAnnouncement>;
export const leaseSubjectOfTerm = (term: string) => `agn.consumption.lease.${term}`;

/**
 * `agn.consumption.census`: a new consumption leader whose predecessor may have left proxies
 * riding a NATS outage on its leases asks every proxy (each answers; not a queue group). A proxy
 * that answers stops admitting on the leases it holds (a leader is reachable: it asks the new one,
 * whose `lease_subject` it follows from now), and says how many of its request events the stream
 * has not taken yet. Once every proxy the store lists as a recent lease holder has answered with
 * none, and the events the stream holds by then are settled, the leader grants instead of waiting
 * out the whole outage grace (see docs/ARCHITECTURE.md, "Caps and consumption").
 */
export const CONSUMPTION_CENSUS_SUBJECT = "agn.consumption.census";
export const ConsumptionCensus = z.object({
  v: z.literal(1),
  lease_subject: z.string().startsWith("agn.consumption.lease."),
});
export type ConsumptionCensus = z.infer<typeof ConsumptionCensus>;
export const ConsumptionCensusAnswer = z.object({
  v: z.literal(1),
  proxy_id: Id,
  /** Request events this proxy has buffered or sent without the stream's ack yet. */
  events_pending: z.number().int().min(0),
  /**
   * Holds of requests still in flight on leases the census ended: their usage is in no event yet.
   * A proxy of an earlier version does not say (0).
   */
  holds_open: z.number().int().min(0).default(0),
});
export type ConsumptionCensusAnswer = z.infer<typeof ConsumptionCensusAnswer>;
