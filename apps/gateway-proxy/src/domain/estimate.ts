import { type Amount, amountOfUsage } from "@agentnet/caps";
import type { CatalogEntry } from "@agentnet/catalog";
import { findCatalogModel } from "@agentnet/catalog";
import { type GatewayProvider, MAX_RATE_PER_1K } from "@agentnet/contracts";
import { type EffectiveRates, ratesForPrompt, resolveRates } from "@agentnet/pricing";
import type { Operation, Wire } from "../wires";
import type { JsonObject } from "./json";
import { type CanonicalValue, canonicalValues } from "./json-edit";
import { geminiOutputCap } from "./request-shape";

/** Output budget assumed when the request sets none: bounds what a streaming answer may overshoot. */
export const DEFAULT_OUTPUT_TOKENS = 4_096;

/**
 * Output a streaming request is admitted with, and what each extension adds as it streams: small
 * next to the 32,000–128,000 `max_tokens` coding agents send, so concurrent agent streams fit a
 * cap that fits their real use. A stream is cut when an extension does not fit (see forward.ts).
 */
export const STREAM_OUTPUT_STEP_TOKENS = 1_024;

/**
 * The most output an estimate counts for a model whose context window the catalog does not know:
 * above every model's output limit, and small enough that the estimate's cost stays exact in
 * packages/pricing at any rate a provider may set.
 */
export const MAX_ESTIMATED_OUTPUT_TOKENS = 1_000_000;

/** About four characters of JSON per token: cheap, and conservative for English and code. */
const CHARS_PER_TOKEN = 4;

/**
 * The body fields that carry prompt text in the vendors' request formats: OpenAI's and
 * Anthropic's, and Gemini's `contents` and system instruction (its JSON takes either case).
 */
const PROMPT_FIELDS = [
  "messages",
  "input",
  "system",
  "instructions",
  "prompt",
  "contents",
  "systemInstruction",
  "system_instruction",
] as const;

const PROMPT_FIELD_SET: ReadonlySet<string> = new Set(PROMPT_FIELDS);

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

/**
 * `promptText(body).length`, measured in `text` (the body as the caller sent it, which parsed to
 * `body`) where it writes a field as JSON.stringify would: serialising a coding agent's 290 KB of
 * messages again took ~1 ms, more than the rest of its admission. Exact whatever the caller's
 * formatting: a field written otherwise (spaces, `\u` escapes, `1e3`, a key sent twice) is
 * serialised as before, so the estimate (caps' holds, the long-context tier, an interrupted
 * stream's charge) does not depend on how a client writes its JSON.
 */
export function promptLength(body: JsonObject, text?: string): number {
  let length = 0;
  let parts = 0;
  let measured: Map<string, CanonicalValue> | undefined;
  for (const field of PROMPT_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    parts++;
    if (typeof value === "string") {
      length += value.length;
      continue;
    }
    if (text !== undefined) measured ??= canonicalValues(text, PROMPT_FIELD_SET);
    const canonical = measured?.get(field);
    // Each parsed member comes from a member of the text, and a key sent twice drops one (and what
    // its value held): as many members parsed as written means no key was sent twice.
    length +=
      canonical !== undefined && canonical.members === objectMembers(value)
        ? canonical.length
        : JSON.stringify(value).length;
  }
  return parts === 0 ? 0 : length + parts - 1;
}

/** The members of every object in a parsed JSON value (a loop, not a recursion, at any depth). */
function objectMembers(value: unknown): number {
  let members = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
      continue;
    }
    for (const item of Object.values(next)) {
      members++;
      pending.push(item);
    }
  }
  return members;
}

/** Output caps were checked on arrival (requestShapeProblem): an integer from 1 to 1e8, or absent. */
const positiveInt = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;

/**
 * Worst-case tokens of a request: the prompt estimate plus its output cap (none for embeddings),
 * the cap read as at most `outputCeiling` (see outputCeiling): a model cannot write more than its
 * window holds, whatever `max_tokens` says.
 */
export function estimateTokens(
  body: JsonObject,
  operation: Operation,
  outputCeiling = MAX_ESTIMATED_OUTPUT_TOKENS,
  /** The body as the caller sent it, when the caller has it: spares serialising the prompt. */
  text?: string,
) {
  const input_tokens = Math.ceil(promptLength(body, text) / CHARS_PER_TOKEN);
  if (operation === "embeddings") return { input_tokens, output_tokens: 0 };
  const requested = requestedOutputCap(body) ?? DEFAULT_OUTPUT_TOKENS;
  return { input_tokens, output_tokens: Math.min(requested, outputCeiling) };
}

/** The output cap the request sets (`max_tokens` and its kin, Gemini's `maxOutputTokens`), if any. */
export function requestedOutputCap(body: JsonObject): number | undefined {
  return (
    positiveInt(body.max_tokens) ??
    positiveInt(body.max_completion_tokens) ??
    positiveInt(body.max_output_tokens) ??
    positiveInt(geminiOutputCap(body))
  );
}

/**
 * The most output a stream may generate, which its hold follows step by step: its own cap, else
 * as much as the model can write (vendors default to the model's limit, and Gemini CLI and many
 * OpenAI clients set none), not the default a whole answer is held at.
 */
export function streamOutputLimit(body: JsonObject, outputCeiling: number): number {
  return Math.min(requestedOutputCap(body) ?? outputCeiling, outputCeiling);
}

/** The most output a request to `model` can produce: its context window when the catalog knows it. */
export function outputCeiling(catalog: CatalogEntry, model: string): number {
  const window = findCatalogModel(catalog.id, model)?.context_window ?? 0;
  return window > 0 ? Math.min(window, MAX_ESTIMATED_OUTPUT_TOKENS) : MAX_ESTIMATED_OUTPUT_TOKENS;
}

/**
 * interruptedUsage: what a request is charged when its stream ended early (the client left, or the
 * proxy cut it at a cap). The vendor read the whole prompt and generated at least what was
 * streamed, but its usage report (OpenAI's format sends it last) never came: count no less than
 * the prompt estimate and the streamed output (a token per event, or three characters of delta
 * text per token, whichever is more), so ending a stream early cannot slip past a token or USD cap.
 */
export function interruptedUsage<T extends { input_tokens: number; output_tokens: number }>(
  seen: T,
  /** The request's `estimateTokens(...).input_tokens`, worked out when it was admitted. */
  promptEstimate: number,
  streamedOutputTokens: number,
): T {
  return {
    ...seen,
    input_tokens: Math.max(seen.input_tokens, promptEstimate),
    output_tokens: Math.max(seen.output_tokens, streamedOutputTokens),
  };
}

/**
 * Rates of a model on a provider: its model row first, the catalog's price otherwise. The usage
 * is read in the shape of the wire it came on: Anthropic's (cache reads and writes beside the
 * input) for Claude on Anthropic or Vertex, OpenAI's (cached tokens inside the input) otherwise.
 */
export function ratesFor(provider: GatewayProvider, catalog: CatalogEntry, model: string, wire: Wire) {
  const row = provider.models.find((candidate) => candidate.id === model);
  const listed = findCatalogModel(catalog.id, model);
  const rates: EffectiveRates = resolveRates(row, listed);
  return { rates, shape: wire.costShape };
}

export type Pricing = ReturnType<typeof ratesFor>;

/**
 * The first rate above MAX_RATE_PER_1K, named, or undefined. Bodies cannot set one, but a provider
 * stored before rates were bounded can hold one, and a cost at such a rate may leave the exact
 * range packages/pricing computes in: the request is refused rather than failing mid-way.
 */
export function rateAboveMaximum(rates: EffectiveRates): string | undefined {
  const name = RATE_NAMES.find((rate) => rates[rate] > MAX_RATE_PER_1K);
  return name && `${name} ${rates[name]}`;
}

const RATE_NAMES = [
  "input_per_1k",
  "output_per_1k",
  "cached_input_per_1k",
  "cache_read_per_1k",
  "cache_creation_per_1k",
] as const;

/**
 * holdAmount: what an estimate holds in counter units. Priced in floating point and rounded up: a
 * hold is an estimate, so exact decimal arithmetic (computeCost's) buys nothing here, and this runs
 * on every capped request. Every token at the input or output rate (no cache discount assumed),
 * the long-context tier's when the estimated prompt is above the model's threshold (the vendor
 * then bills the whole request at it).
 */
export const holdAmount = (
  tokens: { input_tokens: number; output_tokens: number },
  pricing: Pricing,
): Amount => {
  const rates = ratesForPrompt(pricing.rates, tokens.input_tokens);
  // USD per 1k tokens × 10^6 = nano-USD per token.
  const nanos = (tokens.input_tokens * rates.input_per_1k + tokens.output_tokens * rates.output_per_1k) * 1e6;
  return amountOfUsage(tokens, Math.ceil(nanos));
};

/**
 * What one more output step of a capped stream holds: at the long-context tier's output rate when
 * the request's prompt estimate is above the model's threshold, like its admission hold.
 */
export const streamStepAmount = (pricing: Pricing, promptTokens: number): Amount => {
  const rates = ratesForPrompt(pricing.rates, promptTokens);
  const tokens = { input_tokens: 0, output_tokens: STREAM_OUTPUT_STEP_TOKENS };
  return amountOfUsage(tokens, Math.ceil(STREAM_OUTPUT_STEP_TOKENS * rates.output_per_1k * 1e6));
};

/**
 * admissionTokens: what a request holds when admitted. A non-streaming answer cannot be cut, so
 * it holds its worst case (prompt estimate + its output cap); a stream holds the prompt estimate
 * and one output step, and grows as it streams.
 */
export function admissionTokens(worst: AdmittedTokens, stream: boolean): AdmittedTokens {
  if (!stream) return worst;
  return { ...worst, output_tokens: Math.min(worst.output_tokens, STREAM_OUTPUT_STEP_TOKENS) };
}

export interface AdmittedTokens {
  input_tokens: number;
  output_tokens: number;
}

/**
 * What a hold lacks when a request falls back to a provider with other prices: its worst cost
 * there (the tokens it holds, at the new rates) beyond what is held. None when that is no more: a
 * hold only grows, and the request is settled at what it used anyway.
 */
export function fallbackHoldExtra(
  held: Amount,
  tokens: { input_tokens: number; output_tokens: number },
  pricing: Pricing,
): Amount | undefined {
  const extra = holdAmount(tokens, pricing).costNanos - held.costNanos;
  return extra > 0 ? { tokens: 0, costNanos: extra, calls: 0 } : undefined;
}
