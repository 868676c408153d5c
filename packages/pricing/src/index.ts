export { type CostBreakdown, type CostShape, computeCost, sumCosts, type TokenUsage, zeroCost } from "./cost";
export { NANOS_PER_USD, nanosToUsd, usdToNanos } from "./money";
export { type EffectiveRates, type RateCard, resolveRates } from "./rates";
