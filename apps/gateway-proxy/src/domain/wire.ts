import type { ApiFlavor } from "@agentnet/contracts";

/** The vendor wire format a route speaks: decides the error shape and which providers fit. */
export type Wire = "openai" | "anthropic";

/** The inference operations the proxy forwards. */
export type Operation = "chat" | "responses" | "embeddings" | "messages" | "count_tokens";

export const wireOf = (operation: Operation): Wire =>
  operation === "messages" || operation === "count_tokens" ? "anthropic" : "openai";

/**
 * Whether an operation is metered: counted, capped, costed and logged. Anthropic's token counting
 * generates nothing and is free at the vendor, so it is only authenticated and policy-checked.
 */
export const isMetered = (operation: Operation): boolean => operation !== "count_tokens";

/**
 * The proxy forwards without translating, so a provider fits a route only when it speaks that
 * route's format: /v1/messages needs the anthropic flavor, every OpenAI-style route any other
 * flavor (OpenAI, Azure, Mistral, Vertex's and Cloudflare's OpenAI-compatible endpoints, custom).
 */
export const flavorFits = (wire: Wire, flavor: ApiFlavor): boolean =>
  wire === "anthropic" ? flavor === "anthropic" : flavor !== "anthropic";
