export {
  type CostBreakdown,
  type CostShape,
  computeCost,
  MAX_BILLABLE_TOKENS,
  sumCosts,
  type TokenUsage,
  zeroCost,
} from "./cost";
export { NANOS_PER_USD, nanosToUsd, usdToNanos } from "./money";
export { type EffectiveRates, type RateCard, resolveRates } from "./rates";
