import { forbiddenCharacter, MAX_MODEL_LENGTH, MAX_SESSION_ID_LENGTH } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "./json";

/** Deeper than any vendor's request format needs (tool schemas nest a dozen levels at most). */
export const MAX_JSON_DEPTH = 64;

/** Largest output cap accepted: beyond any model's window, and exact in a double. */
export const MAX_OUTPUT_TOKENS_FIELD = 100_000_000;

/** The fields an estimate reads an output cap from, in the four operations' request formats. */
const OUTPUT_CAP_FIELDS = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;

/**
 * Why a parsed request body cannot be served, or undefined: nesting past MAX_JSON_DEPTH (walked
 * without recursion, so the check itself cannot overflow the stack), or an output cap that is not
 * an integer from 1 to MAX_OUTPUT_TOKENS_FIELD.
 */
export function requestShapeProblem(body: JsonObject): string | undefined {
  for (const field of OUTPUT_CAP_FIELDS) {
    const problem = outputCapProblem(field, body[field]);
    if (problem) return problem;
  }
  const geminiProblem = outputCapProblem("generationConfig.maxOutputTokens", geminiOutputCap(body));
  if (geminiProblem) return geminiProblem;
  const pending: [unknown, number][] = [[body, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_JSON_DEPTH) return `the request body nests deeper than ${MAX_JSON_DEPTH} levels`;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === "object" && child !== null) pending.push([child, depth + 1]);
    }
  }
  return undefined;
}

function outputCapProblem(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_OUTPUT_TOKENS_FIELD) {
    return `${field} must be an integer from 1 to ${MAX_OUTPUT_TOKENS_FIELD}`;
  }
  return undefined;
}

/** A Gemini request's output cap, `generationConfig.maxOutputTokens` (its JSON takes either case). */
export function geminiOutputCap(body: JsonObject): unknown {
  const config = body.generationConfig ?? body.generation_config;
  if (!isJsonObject(config)) return undefined;
  return config.maxOutputTokens ?? config.max_output_tokens;
}

/**
 * Why a request's model or session id cannot be served, or undefined. Both go into the request's
 * row, so both are held to the API's bounds (packages/contracts sizes.ts): a model name of at most
 * MAX_MODEL_LENGTH characters of display text, as a provider's model list holds them, and a session
 * id of at most MAX_SESSION_ID_LENGTH characters.
 */
export function identifierProblem(model: string, sessionId: string): string | undefined {
  if (model.length > MAX_MODEL_LENGTH) return `model must be at most ${MAX_MODEL_LENGTH} characters`;
  const found = forbiddenCharacter(model);
  if (found) return `model must not contain ${found}`;
  if (sessionId.length > MAX_SESSION_ID_LENGTH) {
    return `the session id must be at most ${MAX_SESSION_ID_LENGTH} characters`;
  }
  return undefined;
}

/**
 * `text` as a row may hold it: at most `max` UTF-16 units, a cut one ending in "…" and never on
 * the first half of a surrogate pair. What a refused request's row keeps of an oversized value.
 */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
