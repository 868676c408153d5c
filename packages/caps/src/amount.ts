import type { Quantity } from "@agentnet/contracts";

/**
 * An amount in counter units: total tokens (input + output), nano-USD and MCP tool calls. The proxy's leases and
 * holds and the leader's leases count in it; the bus carries it as a `Quantity` (snake case, never
 * negative).
 */
export interface Amount {
  tokens: number;
  costNanos: number;
  calls: number;
}

export const NO_AMOUNT: Amount = { tokens: 0, costNanos: 0, calls: 0 };

/** The measures, as `Amount` names them: a rule sized per measure takes one of these. */
export type AmountMeasure = keyof Amount;

export const addAmounts = (a: Amount, b: Amount): Amount => ({
  tokens: a.tokens + b.tokens,
  costNanos: a.costNanos + b.costNanos,
  calls: a.calls + b.calls,
});

/** `a - b` per measure; negative where `b` is more. */
export const subtractAmounts = (a: Amount, b: Amount): Amount => ({
  tokens: a.tokens - b.tokens,
  costNanos: a.costNanos - b.costNanos,
  calls: a.calls - b.calls,
});

/** What `a` has beyond `b` per measure, 0 where it has none. */
export const amountBeyond = (a: Amount, b: Amount): Amount => ({
  tokens: Math.max(0, a.tokens - b.tokens),
  costNanos: Math.max(0, a.costNanos - b.costNanos),
  calls: Math.max(0, a.calls - b.calls),
});

export const isNoAmount = (amount: Amount): boolean =>
  amount.tokens === 0 && amount.costNanos === 0 && amount.calls === 0;

/** An amount as the bus carries it: a measure below 0 (a hold swapped for less) is sent as 0. */
export const quantityOfAmount = (amount: Amount): Quantity => ({
  tokens: Math.max(0, amount.tokens),
  cost_nanos: Math.max(0, amount.costNanos),
  calls: Math.max(0, amount.calls),
});

/** A quantity from the bus as an amount. */
export const amountOfQuantity = (quantity: Quantity): Amount => ({
  tokens: quantity.tokens,
  costNanos: quantity.cost_nanos,
  calls: quantity.calls,
});

/** What a model request's tokens and cost count on its counters: input and output tokens alike. */
export const amountOfUsage = (
  usage: { input_tokens: number; output_tokens: number },
  costNanos: number,
): Amount => ({ tokens: usage.input_tokens + usage.output_tokens, costNanos, calls: 0 });

/** What one MCP tool call counts on its counters: its server's price per call, and one call. */
export const amountOfToolCall = (costNanos: number): Amount => ({ tokens: 0, costNanos, calls: 1 });
