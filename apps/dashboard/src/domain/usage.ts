import type { UsageBreakdownDimension, UsageBreakdownRow, UsageSeriesBucket } from "@agentnet/contracts";

export interface UsageTotals {
  requests: number;
  errors: number;
  denied: number;
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** Sums series buckets into the totals shown at a glance (latency quantiles do not add up). */
export function sumSeries(buckets: readonly UsageSeriesBucket[]): UsageTotals {
  const totals: UsageTotals = {
    requests: 0,
    errors: 0,
    denied: 0,
    total_tokens: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
  };
  for (const b of buckets) {
    totals.requests += b.requests;
    totals.errors += b.errors;
    totals.denied += b.denied;
    totals.total_tokens += b.total_tokens;
    totals.input_tokens += b.input_tokens;
    totals.output_tokens += b.output_tokens;
    totals.cost_usd += b.cost_usd;
  }
  totals.cost_usd = Math.round(totals.cost_usd * 1e9) / 1e9;
  return totals;
}

/** `part` as a share of `requests`; null when there were none (no rate to draw). */
export const shareOf = (part: number, requests: number): number | null =>
  requests > 0 ? part / requests : null;

/** The requests that were neither denied nor answered with an error. */
export const succeeded = (b: Pick<UsageSeriesBucket, "requests" | "errors" | "denied">): number =>
  b.requests - b.errors - b.denied;

/** One line of a spend table: what one model, provider, user or group used in the range. */
export interface SpendRow {
  key: string;
  label: string;
  requests: number;
  tokens: number;
  cost: number;
}

/** What a breakdown row without a key stands for, by dimension. */
const WITHOUT_KEY: Record<UsageBreakdownDimension, string> = {
  user: "Unknown user",
  group: "No group",
  model: "No model",
  provider: "No provider (denied before routing)",
};

/**
 * The API's breakdown rows as spend rows, in the API's order (most expensive first), named by
 * `names` (id → display name) where it knows the key.
 */
export function spendRows(
  by: UsageBreakdownDimension,
  rows: readonly UsageBreakdownRow[],
  names: ReadonlyMap<string, string>,
): SpendRow[] {
  return rows.map((row) => ({
    key: row.key,
    label: row.key === "" ? WITHOUT_KEY[by] : (names.get(row.key) ?? row.key),
    requests: row.requests,
    tokens: row.total_tokens,
    cost: row.cost_usd,
  }));
}
