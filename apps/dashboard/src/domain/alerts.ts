import { type DeliveryStatus, MAX_THRESHOLDS, type WebhookEvent } from "@agentnet/contracts";
import { formatTokens, formatUsd } from "./format";

/**
 * Thresholds as an admin types them ("50, 80, 100"): whole percents from 1 to 100, each once, at
 * most MAX_THRESHOLDS (the contracts' rule, said in words before the API says it); answered
 * ascending, or the first problem in words.
 */
export function parseThresholds(text: string): { thresholds: number[] } | { error: string } {
  const parts = text
    .split(/[\s,;]+/)
    .map((part) => part.replace(/%$/, ""))
    .filter((part) => part !== "");
  if (parts.length === 0) return { error: "Give at least one threshold, e.g. 80." };
  if (parts.length > MAX_THRESHOLDS) return { error: `At most ${MAX_THRESHOLDS} thresholds.` };
  const thresholds: number[] = [];
  for (const part of parts) {
    const value = Number(part);
    if (!/^\d+$/.test(part) || value < 1 || value > 100)
      return { error: `${part} is not a whole percent from 1 to 100.` };
    if (thresholds.includes(value)) return { error: `${value} % is listed twice.` };
    thresholds.push(value);
  }
  return { thresholds: thresholds.sort((a, b) => a - b) };
}

/** What an event was about, in one line, with the names the page knows for ids. */
export function describeEvent(event: WebhookEvent, nameOf: (id: string) => string): string {
  if (event.type === "provider.credential_failed") {
    return `Provider ${event.provider.name}: the vendor answered ${event.provider.upstream_status} (credential refused)`;
  }
  const c = event.counter;
  const amount = (value: number) =>
    c.kind === "usd"
      ? formatUsd(value)
      : c.kind === "tool_calls"
        ? `${value} tool calls`
        : `${formatTokens(value)} tokens`;
  const who = c.scope === "user" ? `user ${nameOf(c.subject_id)}` : `group ${nameOf(c.subject_id)}`;
  const source = c.source === "budget_rule" ? "budget rule" : "policy";
  return `${c.threshold} % of ${source} ${c.source_name} for ${who}: ${amount(c.used)} of ${amount(c.cap)}`;
}

export const DELIVERY_TONE: Record<DeliveryStatus, "ok" | "bad" | "muted" | "info"> = {
  delivered: "ok",
  retrying: "info",
  pending: "muted",
  failed: "bad",
  refused: "bad",
};
