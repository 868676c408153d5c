import type { ApiFlavor } from "@agentnet/contracts";

/**
 * The vendor format a route speaks: its bodies, its usage report, its stream events and its error
 * shape. The route decides it (http/routes.ts); which providers fit follows from it.
 */
export type Wire = "openai" | "anthropic" | "gemini";

/** The inference operations the proxy forwards; token counting is Anthropic's or Gemini's by its wire. */
export type Operation =
  | "chat"
  | "responses"
  | "embeddings"
  | "messages"
  | "count_tokens"
  | "generate_content";

/**
 * Whether an operation is metered: counted, capped, costed and logged. Token counting generates
 * nothing and is free at the vendor, so it is only authenticated and policy-checked.
 */
export const isMetered = (operation: Operation): boolean => operation !== "count_tokens";

/**
 * A provider fits a route when it serves that route's format, as it is or with the request
 * rewritten for it (domain/upstream-request.ts):
 * - Anthropic's Messages API: Anthropic, and Vertex (Claude on Vertex: rawPredict);
 * - Gemini's generateContent: the Gemini API, and Vertex (publishers/google);
 * - every OpenAI-style route: every flavor but Anthropic's and the Gemini API's (OpenAI, Azure,
 *   Mistral, Vertex's and Cloudflare's OpenAI-compatible endpoints, custom).
 */
export function flavorFits(wire: Wire, flavor: ApiFlavor): boolean {
  switch (wire) {
    case "anthropic":
      return flavor === "anthropic" || flavor === "vertex";
    case "gemini":
      return flavor === "gemini" || flavor === "vertex";
    case "openai":
      return flavor !== "anthropic" && flavor !== "gemini";
  }
}
