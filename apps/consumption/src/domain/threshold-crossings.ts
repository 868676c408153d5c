import type { BudgetCounterAlert, CapStatus } from "@agentnet/contracts";

/** What an account watches: thresholds in percent of a cap, and the rules and policies in scope. */
export interface WatchedCaps {
  thresholds: readonly number[];
  /** Both empty: every cap of every rule and policy. */
  budget_rule_ids: readonly string[];
  policy_ids: readonly string[];
}

/** One threshold a cap reached in its window, and the key that alert is known by once and for all. */
export interface Crossing {
  key: string;
  counter: BudgetCounterAlert;
}

/** Usage within this of a percent still reaches it: USD amounts arrive as floats. */
const PERCENT_TOLERANCE = 1e-9;

const inScope = (status: CapStatus, watched: WatchedCaps): boolean => {
  if (watched.budget_rule_ids.length === 0 && watched.policy_ids.length === 0) return true;
  const ids = status.source === "budget_rule" ? watched.budget_rule_ids : watched.policy_ids;
  return ids.includes(status.source_id);
};

/**
 * thresholdCrossings: every threshold each watched cap has reached in its window. A cap reaches
 * t % when its settled usage is at least t % of its limit; held headroom (requests in flight) is
 * not usage, so only what was really spent raises an alert. Every threshold reached is listed, not
 * only the highest: one settled batch can carry a counter past 50 and 80 % at once, and each is an
 * alert of its own. A cap whose next request no longer fits is refused before it is full, so its
 * 100 % may never be reached; the thresholds below it are what warn.
 *
 * The key names the cap (source, its id, measure), its counter (dimension and window) and the
 * threshold: what was sent is recorded under it, so an alert is sent once per threshold and window
 * however often it is computed again (after a restart, on another leader).
 */
export function thresholdCrossings(
  accountId: string,
  statuses: readonly CapStatus[],
  watched: WatchedCaps,
): Crossing[] {
  const crossings: Crossing[] = [];
  for (const status of statuses) {
    if (status.limit <= 0 || !inScope(status, watched)) continue;
    const percent = (status.used / status.limit) * 100;
    const windowStartMs = Date.parse(status.window_start_utc);
    for (const threshold of watched.thresholds) {
      if (percent + PERCENT_TOLERANCE < threshold) continue;
      crossings.push({
        key: [
          "budget",
          accountId,
          status.source,
          status.source_id,
          status.measure,
          status.dimension_kind,
          status.dimension_id,
          status.window_seconds,
          windowStartMs / 1000,
          threshold,
        ].join("|"),
        counter: {
          scope: status.dimension_kind,
          subject_id: status.dimension_id,
          source: status.source,
          source_id: status.source_id,
          source_name: status.source_name,
          kind: status.measure,
          cap: status.limit,
          used: status.used,
          threshold,
          window_seconds: status.window_seconds,
          window_start: new Date(windowStartMs).toISOString(),
          window_end: new Date(windowStartMs + status.window_seconds * 1000).toISOString(),
        },
      });
    }
  }
  return crossings;
}
