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

/**
 * The same exact amount as `usdToDecimal`, cheaper on the ingest path: a number whose shortest
 * text already has at most 9 decimals and no exponent (what the proxy's nano-USD amounts are) is
 * that decimal, and ClickHouse parses decimal text exactly; anything else takes the rounding path.
 */
export function usdToDecimalText(usd: number): string {
  const text = String(usd);
  if (text.includes("e")) return usdToDecimal(usd);
  const dot = text.indexOf(".");
  return dot < 0 || text.length - dot - 1 <= 9 ? text : usdToDecimal(usd);
}
