import type { Agent } from "undici";
import { request } from "undici";
import type { DialFailure } from "../domain/outcomes";
import {
  type DialSettings,
  discard,
  failureFor,
  listingAuthority,
  type PinnedTarget,
  readCapped,
} from "./https";

export type McpPosted =
  | { ok: true; status: number; session: string | undefined; contentType: string; text: string }
  /** A non-2xx answer; its body is never read (servers may echo credentials into error bodies). */
  | { ok: true; status: number; session?: undefined; contentType?: undefined; text?: undefined }
  | { ok: false; failure: DialFailure };

/**
 * Sends one JSON-RPC message (POST) or ends a session (DELETE) over HTTPS through a pinned agent,
 * as an MCP client does on the Streamable HTTP transport; the answer's body is read capped, as text
 * (JSON or an event stream). No redirect is followed.
 */
export async function sendToMcpServer(
  agent: Agent,
  target: PinnedTarget,
  path: string,
  message: { method: "POST" | "DELETE"; headers: Record<string, string>; body?: string },
  settings: DialSettings,
  signal: AbortSignal,
): Promise<McpPosted> {
  try {
    const response = await request(`https://${listingAuthority(target)}${path}`, {
      method: message.method,
      headers: message.headers,
      body: message.body ?? null,
      dispatcher: agent,
      signal,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      return { ok: true, status: response.statusCode };
    }
    const text = await readCapped(response.body, settings.maxBodyBytes);
    if (text === undefined) {
      return {
        ok: false,
        failure: { kind: "too_large", host: target.host, limitBytes: settings.maxBodyBytes },
      };
    }
    const session = response.headers["mcp-session-id"];
    return {
      ok: true,
      status: response.statusCode,
      session: typeof session === "string" && session !== "" ? session : undefined,
      contentType: String(response.headers["content-type"] ?? ""),
      text,
    };
  } catch (error) {
    if (signal.aborted) {
      return {
        ok: false,
        failure: { kind: "timeout", host: target.host, timeoutMs: settings.timeoutMs, phase: "response" },
      };
    }
    return { ok: false, failure: failureFor(error, target.host) };
  }
}
