import type { CatalogProvider } from "@agentnet/contracts";

/** Catalog prices older than this many days are flagged: vendors change prices within months. */
export const STALE_AFTER_DAYS = 60;

const DAY_MS = 24 * 3600 * 1000;

export interface PriceFreshness {
  /** The day the prices were checked against the vendor's page (YYYY-MM-DD). */
  checkedOn: string;
  /** The vendor's price page, when the catalog names one. */
  source?: string;
  /** Whole days between the check and `now` (0 on the day itself). */
  ageDays: number;
  /** Checked more than STALE_AFTER_DAYS days ago. */
  stale: boolean;
}

const dayNumber = (isoDay: string): number | undefined => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDay);
  if (!match) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(ms) ? undefined : Math.floor(ms / DAY_MS);
};

/**
 * How fresh a catalog entry's prices are, by calendar day in UTC. Undefined for an entry that
 * ships no prices (custom: the operator's model rows are its prices) or names no check date.
 */
export function priceFreshness(
  entry: Pick<CatalogProvider, "models" | "prices_checked_on" | "prices_source">,
  now: Date,
): PriceFreshness | undefined {
  const checkedOn = entry.prices_checked_on;
  if (entry.models.length === 0 || checkedOn === undefined) return undefined;
  const checked = dayNumber(checkedOn);
  if (checked === undefined) return undefined;
  const ageDays = Math.max(0, Math.floor(now.getTime() / DAY_MS) - checked);
  return {
    checkedOn,
    ...(entry.prices_source ? { source: entry.prices_source } : {}),
    ageDays,
    stale: ageDays > STALE_AFTER_DAYS,
  };
}
