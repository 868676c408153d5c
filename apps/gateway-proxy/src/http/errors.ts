import type { ServerResponse } from "node:http";
import type { Wire } from "../domain/wire";

/** Error types both vendors use, by status, so SDKs raise their usual error classes. */
function errorType(status: number): string {
  if (status === 400 || status === 413) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}

/**
 * The status a vendor of `wire` answers when it is overloaded, which its SDKs retry after
 * `retry-after`: Anthropic's 529 (`overloaded_error`), 503 for OpenAI's and Google's.
 */
export const overloadedStatus = (wire: Wire): number => (wire === "anthropic" ? 529 : 503);

/** Google's canonical error status of an HTTP status, as the Gemini API and Vertex answer it. */
function googleStatus(status: number): string {
  if (status === 400 || status === 413) return "INVALID_ARGUMENT";
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "PERMISSION_DENIED";
  if (status === 404 || status === 405) return "NOT_FOUND";
  if (status === 429) return "RESOURCE_EXHAUSTED";
  if (status === 499) return "CANCELLED";
  if (status === 503 || status === 502 || status === 529) return "UNAVAILABLE";
  if (status === 504) return "DEADLINE_EXCEEDED";
  return "INTERNAL";
}

/**
 * An error in the vendor's own shape: OpenAI `{"error":{"message","type","code"}}`, Anthropic
 * `{"type":"error","error":{"type","message"}}`, Google `{"error":{"code","message","status"}}`.
 * The reason code is in `code` (OpenAI), in the message, and in the `x-agentnet-reason` header,
 * so any client can tell why.
 */
export function sendError(
  res: ServerResponse,
  wire: Wire,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const text = `${message} (${reason})`;
  const body =
    wire === "anthropic"
      ? { type: "error", error: { type: errorType(status), message: text } }
      : wire === "gemini"
        ? { error: { code: status, message: text, status: googleStatus(status) } }
        : { error: { message: text, type: errorType(status), code: reason, param: null } };
  sendJson(res, status, body, { "x-agentnet-reason": reason, ...headers });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}
