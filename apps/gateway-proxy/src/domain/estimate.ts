import type { CatalogEntry } from "@agentnet/catalog";
import { findCatalogModel } from "@agentnet/catalog";
import type { GatewayProvider, ReservationEstimate } from "@agentnet/contracts";
import { type CostShape, computeCost, type EffectiveRates, resolveRates } from "@agentnet/pricing";
import type { JsonObject } from "./json";
import type { Operation } from "./wire";

/** Output budget assumed when the request sets none: bounds what a streaming answer may overshoot. */
export const DEFAULT_OUTPUT_TOKENS = 4_096;

/** About four characters of JSON per token: cheap, and conservative for English and code. */
const CHARS_PER_TOKEN = 4;

/** The body fields that carry prompt text in the four operations' request formats. */
const PROMPT_FIELDS = ["messages", "input", "system", "instructions", "prompt"] as const;

/** The prompt as the request carries it (JSON of its prompt fields), for estimates and capture. */
export function promptText(body: JsonObject): string {
  const parts: string[] = [];
  for (const field of PROMPT_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    parts.push(typeof value === "string" ? value : JSON.stringify(value));
  }
  return parts.join("\n");
}

const positiveInt = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;

/** Worst-case tokens of a request: the prompt estimate plus its output cap (none for embeddings). */
export function estimateTokens(body: JsonObject, operation: Operation) {
  const input_tokens = Math.ceil(promptText(body).length / CHARS_PER_TOKEN);
  if (operation === "embeddings") return { input_tokens, output_tokens: 0 };
  const output_tokens =
    positiveInt(body.max_tokens) ??
    positiveInt(body.max_completion_tokens) ??
    positiveInt(body.max_output_tokens) ??
    DEFAULT_OUTPUT_TOKENS;
  return { input_tokens, output_tokens };
}

/**
 * interruptedUsage: what a request is charged when the client left before the answer ended. The
 * vendor read the whole prompt and generated at least what was streamed, but its usage report
 * (OpenAI's format sends it last) never came: count no less than the prompt estimate and one token
 * per streamed event, so aborting a stream cannot slip past a token or USD cap.
 */
export function interruptedUsage<T extends { input_tokens: number; output_tokens: number }>(
  seen: T,
  body: JsonObject,
  operation: Operation,
  streamedEvents: number,
): T {
  return {
    ...seen,
    input_tokens: Math.max(seen.input_tokens, estimateTokens(body, operation).input_tokens),
    output_tokens: Math.max(seen.output_tokens, streamedEvents),
  };
}

/** Rates of a model on a provider: its model row first, the catalog's price otherwise. */
export function ratesFor(provider: GatewayProvider, catalog: CatalogEntry, model: string) {
  const row = provider.models.find((candidate) => candidate.id === model);
  const listed = findCatalogModel(catalog.id, model);
  const rates: EffectiveRates = resolveRates(row, listed);
  const shape: CostShape = catalog.api_flavor === "anthropic" ? "anthropic" : "openai";
  return { rates, shape };
}

export function reservationEstimate(
  body: JsonObject,
  operation: Operation,
  pricing: { rates: EffectiveRates; shape: CostShape },
): ReservationEstimate {
  const tokens = estimateTokens(body, operation);
  return { ...tokens, cost_usd: computeCost(tokens, pricing.rates, pricing.shape).cost_usd };
}
