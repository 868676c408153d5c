import type { GatewayRequestEvent } from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";
import type { Amount, CounterState } from "./reservation";

/**
 * How a reservation ends. `settled`: the event's real usage replaces the estimate. `released`: a
 * denied or failed request frees the estimate. `expired`: no event came in time. `late`: an event for an already expired
 * reservation still adds its real usage (the estimate was freed by the expiry).
 */
export type Outcome = "settled" | "released" | "expired" | "late";

/** What the request really used, in counter units. */
export interface Actual {
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
}

/** outcomeOfEvent: a denied request, or a failed one that used no tokens, releases its reservation. */
export function outcomeOfEvent(event: GatewayRequestEvent): "settled" | "released" {
  if (event.decision === "deny") return "released";
  const used = event.input_tokens + event.output_tokens;
  if (event.status_code >= 400 && used === 0) return "released";
  return "settled";
}

export const actualOf = (event: GatewayRequestEvent): Actual => ({
  tokens_input: event.input_tokens,
  tokens_output: event.output_tokens,
  cost_nanos: usdToNanos(event.cost_usd),
});

/** The ledger op an outcome writes on each counter; one op id per kind makes replays idempotent. */
export type OpKind = "reserve" | "release" | "settle" | "late";

export const opOfOutcome = (outcome: Outcome): OpKind =>
  outcome === "settled" ? "settle" : outcome === "late" ? "late" : "release";

/** The change one op makes to a counter holding a reservation of `estimate`. */
export function applyOp(state: CounterState, op: OpKind, estimate: Amount, actual?: Actual): CounterState {
  const real = actual ?? { tokens_input: 0, tokens_output: 0, cost_nanos: 0 };
  const realTokens = real.tokens_input + real.tokens_output;
  switch (op) {
    case "reserve":
      return {
        ...state,
        committed_tokens: state.committed_tokens + estimate.tokens,
        committed_cost_nanos: state.committed_cost_nanos + estimate.costNanos,
      };
    case "release":
      return {
        ...state,
        committed_tokens: state.committed_tokens - estimate.tokens,
        committed_cost_nanos: state.committed_cost_nanos - estimate.costNanos,
      };
    case "settle":
    case "late": {
      // settle swaps the held estimate for real usage; late has no estimate held any more.
      const held = op === "settle" ? estimate : { tokens: 0, costNanos: 0 };
      return {
        committed_tokens: state.committed_tokens - held.tokens + realTokens,
        committed_cost_nanos: state.committed_cost_nanos - held.costNanos + real.cost_nanos,
        tokens_input: state.tokens_input + real.tokens_input,
        tokens_output: state.tokens_output + real.tokens_output,
        cost_nanos: state.cost_nanos + real.cost_nanos,
        settled_requests: state.settled_requests + 1,
      };
    }
  }
}
