import type { AccessLogEntry, UsageBucket } from "@agentnet/contracts";

export interface UsageTotals {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cost_usd: number;
}

/** Sums buckets into the totals shown at a glance. */
export function sumBuckets(buckets: readonly UsageBucket[]): UsageTotals {
  const totals: UsageTotals = {
    total_tokens: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_input_tokens: 0,
    cost_usd: 0,
  };
  for (const b of buckets) {
    totals.total_tokens += b.total_tokens;
    totals.input_tokens += b.input_tokens;
    totals.output_tokens += b.output_tokens;
    totals.cached_input_tokens += b.cached_input_tokens;
    totals.cost_usd += b.cost_usd;
  }
  totals.cost_usd = Math.round(totals.cost_usd * 1e9) / 1e9;
  return totals;
}

/** The models and providers (id → display name) that appear in some log entries. */
export function dimensionsOf(entries: readonly AccessLogEntry[]) {
  const models = new Set<string>();
  const providers = new Map<string, string>();
  for (const e of entries) {
    if (e.model) models.add(e.model);
    if (e.resolved_provider_id) providers.set(e.resolved_provider_id, e.provider || e.resolved_provider_id);
  }
  return { models: [...models].sort(), providers };
}
