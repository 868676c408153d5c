import type { ApiFlavor } from "@agentnet/contracts";

/** The vendor wire format a route speaks: decides the error shape and which providers fit. */
export type Wire = "openai" | "anthropic";

/** The inference operations the proxy forwards. */
export type Operation = "chat" | "responses" | "embeddings" | "messages";

export const wireOf = (operation: Operation): Wire => (operation === "messages" ? "anthropic" : "openai");

/**
 * The proxy forwards without translating, so a provider fits a route only when it speaks that
 * route's format: /v1/messages needs the anthropic flavor, every OpenAI-style route any other
 * flavor (OpenAI, Azure, Mistral, Vertex's and Cloudflare's OpenAI-compatible endpoints, custom).
 */
export const flavorFits = (wire: Wire, flavor: ApiFlavor): boolean =>
  wire === "anthropic" ? flavor === "anthropic" : flavor !== "anthropic";
