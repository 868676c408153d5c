import type { ApiFlavor } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "./json";
import type { Operation, Wire } from "./wire";

/** The Messages API version Vertex takes in the body of Claude requests. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/** The Messages API version sent to Anthropic for a request that came as Vertex's (which names its own). */
const ANTHROPIC_VERSION = "2023-06-01";

export interface VendorBodyEdit {
  /** Headers the vendor needs for the edited body (Anthropic's version, moved out of the body). */
  headers: Record<string, string>;
}

/**
 * Edits the caller's body (in place) into the one the candidate's vendor takes; the rest passes
 * through as the caller sent it.
 * - OpenAI wire: `model` is the candidate's; a streamed chat completion asks for its usage
 *   (`stream_options.include_usage`), which OpenAI and Azure only report when asked, except on
 *   Mistral, which refuses the field (422) and reports usage on its last chunk by itself.
 * - Anthropic wire to Anthropic: `model` is the candidate's; a Vertex-style body's
 *   `anthropic_version` goes into the `anthropic-version` header instead.
 * - Anthropic wire to Vertex: no `model` in the body (the path names it; token counting keeps it),
 *   and `anthropic_version` is Vertex's unless the caller named one.
 * - Gemini wire: the path names the model; the body passes as it is.
 */
export function editForVendor(
  body: JsonObject,
  wire: Wire,
  operation: Operation,
  flavor: ApiFlavor,
  model: string,
  streams: boolean,
): VendorBodyEdit {
  const headers: Record<string, string> = {};
  if (wire === "openai") {
    if (operation === "chat" && streams && flavor !== "mistral") {
      body.stream_options = {
        ...(isJsonObject(body.stream_options) ? body.stream_options : {}),
        include_usage: true,
      };
    }
    if (body.model !== model) body.model = model;
  } else if (wire === "anthropic" && flavor === "vertex") {
    if (operation === "count_tokens") body.model = model;
    else delete body.model;
    if (typeof body.anthropic_version !== "string") body.anthropic_version = VERTEX_ANTHROPIC_VERSION;
  } else if (wire === "anthropic") {
    if (body.model !== model) body.model = model;
    if ("anthropic_version" in body) {
      const version = body.anthropic_version;
      delete body.anthropic_version;
      headers["anthropic-version"] =
        typeof version === "string" && !version.startsWith("vertex-") ? version : ANTHROPIC_VERSION;
    }
  }
  return { headers };
}
