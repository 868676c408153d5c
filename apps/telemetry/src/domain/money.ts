import { usdToNanos } from "@agentnet/pricing";

/**
 * A USD amount as the exact decimal text a `Decimal(38, 9)` column takes. The event carries USD
 * as a JSON number computed from integer nano-USD by the proxy; going back through its shortest
 * decimal text (never float multiplication) recovers those nanos exactly, and the column then
 * sums them without drift.
 */
export function usdToDecimal(usd: number): string {
  const nanos = usdToNanos(usd);
  const sign = nanos < 0 ? "-" : "";
  const digits = String(Math.abs(nanos)).padStart(10, "0");
  return `${sign}${digits.slice(0, -9)}.${digits.slice(-9)}`;
}
