export {
  type CostBreakdown,
  type CostShape,
  computeCost,
  MAX_BILLABLE_TOKENS,
  promptTokens,
  sumCosts,
  type TokenUsage,
  zeroCost,
} from "./cost";
export { NANOS_PER_USD, nanosToUsd, usdToNanos } from "./money";
export {
  type EffectiveRates,
  type LongContextCard,
  type RateCard,
  ratesForPrompt,
  resolveRates,
  type TierRates,
} from "./rates";
