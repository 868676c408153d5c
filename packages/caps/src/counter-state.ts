import type { Amount } from "./amount";
import type { CounterKey } from "./counters";

/** What a counter holds. committed_* = settled usage + every lease's unsettled part. */
export interface CounterState {
  committed_tokens: number;
  committed_cost_nanos: number;
  committed_calls: number;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  /** MCP tool calls settled into this counter. */
  tool_calls: number;
  /** Requests settled into this counter: a counter only ever leased lists as nothing. */
  settled_requests: number;
}

export const EMPTY_STATE: CounterState = {
  committed_tokens: 0,
  committed_cost_nanos: 0,
  committed_calls: 0,
  tokens_input: 0,
  tokens_output: 0,
  cost_nanos: 0,
  tool_calls: 0,
  settled_requests: 0,
};

/** What a counter's settled usage counts against its caps. */
export const settledAmountOf = (counter: CounterState): Amount => ({
  tokens: counter.tokens_input + counter.tokens_output,
  costNanos: counter.cost_nanos,
  calls: counter.tool_calls,
});

/** What a counter holds against its caps: settled usage plus every lease's unsettled part. */
export const committedAmountOf = (counter: CounterState): Amount => ({
  tokens: counter.committed_tokens,
  costNanos: counter.committed_cost_nanos,
  calls: counter.committed_calls,
});

/** A counter in memory: its key, what it holds, and when usage last changed it (ms). */
export interface Counter extends CounterKey, CounterState {
  updated_at: number;
}

/** Real usage added to one counter: the unit settlement journals and snapshots persist. */
export interface UsageDelta {
  key: CounterKey;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  tool_calls: number;
  requests: number;
  at: number;
}
