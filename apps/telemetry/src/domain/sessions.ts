import type { AccessLogSessionSortField } from "@agentnet/contracts";

/**
 * A session's decision: "deny" when any of its entries was denied, else "allow". A session is a
 * conversation; one blocked request in it is what someone reviewing it needs to see first.
 */
export const sessionDecision = (deniedEntries: number): "deny" | "allow" =>
  deniedEntries > 0 ? "deny" : "allow";

/**
 * The session column a sort field orders by. `timestamp` is the last activity (ended_at) and
 * `decision` orders by whether any entry was denied, which sorts like the words ("allow" < "deny").
 */
export function sessionSortColumn(field: AccessLogSessionSortField): string {
  if (field === "timestamp") return "ended_at";
  if (field === "decision") return "denied";
  return field;
}
