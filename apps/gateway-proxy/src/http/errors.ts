import type { HttpAnswer } from "@agentnet/service-kit";
import type { Wire } from "../wires";

/**
 * An error in the vendor's own shape: OpenAI `{"error":{"message","type","code"}}`, Anthropic
 * `{"type":"error","error":{"type","message"}}`, Google `{"error":{"code","message","status"}}`,
 * Bedrock `{"message"}` with its type in `x-amzn-errortype`.
 * The reason code is in `code` (OpenAI), in the message, and in the `x-agentnet-reason` header,
 * so any client can tell why.
 */
export function sendError(
  res: HttpAnswer,
  wire: Wire,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const text = `${message} (${reason})`;
  sendJson(res, status, wire.errorBody(status, reason, text), {
    ...wire.errorHeaders(status),
    "x-agentnet-reason": reason,
    ...headers,
  });
}

export function sendJson(
  res: HttpAnswer,
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
