import type { JsonObject } from "./json";

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
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (
      typeof value !== "number" ||
      !Number.isInteger(value) ||
      value < 1 ||
      value > MAX_OUTPUT_TOKENS_FIELD
    ) {
      return `${field} must be an integer from 1 to ${MAX_OUTPUT_TOKENS_FIELD}`;
    }
  }
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
