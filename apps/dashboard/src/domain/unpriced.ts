import type { AccessLogEntry, Provider } from "@agentnet/contracts";

export interface UnpricedModel {
  providerId: string;
  providerName: string;
  model: string;
  requests: number;
}

/**
 * unpricedModels: the (provider, model) pairs requests were served or refused for without a price:
 * allowed rows that used tokens but cost $0, and rows refused as `pricing.unknown_model`. A model
 * the provider has a row for is priced (a rate of 0 is a choice), so it is left out.
 */
export function unpricedModels(
  entries: readonly AccessLogEntry[],
  providers: readonly Provider[],
): UnpricedModel[] {
  const found = new Map<string, UnpricedModel>();
  for (const entry of entries) {
    const unpriced =
      entry.deny_reason === "pricing.unknown_model" ||
      (entry.decision === "allow" && entry.cost_usd === 0 && entry.total_tokens > 0);
    if (!unpriced || entry.resolved_provider_id === "") continue;
    const provider = providers.find((p) => p.id === entry.resolved_provider_id);
    if (provider?.models.some((row) => row.id === entry.model)) continue;
    const key = `${entry.resolved_provider_id}|${entry.model}`;
    const seen = found.get(key) ?? {
      providerId: entry.resolved_provider_id,
      providerName: provider?.name ?? entry.provider,
      model: entry.model,
      requests: 0,
    };
    seen.requests += 1;
    found.set(key, seen);
  }
  return [...found.values()].sort((a, b) => b.requests - a.requests || a.model.localeCompare(b.model));
}
