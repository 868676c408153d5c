/**
 * Where a request's session id comes from, first present wins:
 * - `x-session-id`: ours, for any client that wants to group its requests;
 * - `x-claude-code-session-id`: Claude Code sends it on every request of a session;
 * - `session_id`, then `conversation_id`: Codex CLI's headers (newer versions send `session_id`,
 *   older ones `conversation_id`).
 * None present: empty, and the request forms a singleton session.
 */
export const SESSION_HEADERS = ["x-session-id", "x-claude-code-session-id", "session_id", "conversation_id"];

/** Longest id kept: a header is caller input and ends up in a ClickHouse key. */
const MAX_SESSION_ID = 200;

export function sessionIdFrom(headers: Readonly<Record<string, string | string[] | undefined>>): string {
  for (const name of SESSION_HEADERS) {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value) return value.slice(0, MAX_SESSION_ID);
  }
  return "";
}
