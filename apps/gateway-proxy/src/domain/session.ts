import { createHash } from "node:crypto";
import { isJsonObject, type JsonObject } from "./json";

/**
 * Where a request's session id comes from, first present wins:
 * 1. `x-session-id`: ours, for any client that wants to group its requests;
 * 2. `x-claude-code-session-id`: Claude Code sends it on every request of a session;
 * 3. the session in the body's `metadata.user_id` (Claude Code): a JSON string with `session_id`
 *    in recent versions, `user_<hash>_account_<uuid>_session_<uuid>` in older ones;
 * 4. `session-id`, then `thread-id`: Codex CLI (0.16x and later);
 * 5. `session_id`, then `conversation_id`: older Codex CLI versions;
 * 6. `x-opencode-session`: OpenCode;
 * 7. Gemini CLI (its `user-agent` starts `GeminiCLI`) sends no session id with an API key: every
 *    request of one run repeats the run's first turn as `contents[0]` (its session context: date,
 *    OS, workspace and its listing, then the prompt), so a hash of it, with the installation id
 *    the CLI sends when usage statistics are on, groups a run. Two runs of one prompt in one
 *    workspace on one day share it; `GEMINI_CLI_CUSTOM_HEADERS="x-session-id: <id>"` names one.
 * None present: empty, and the request forms a singleton session. The id is returned whole: one
 * longer than a row holds is refused (identifierProblem), not cut into another session's id.
 */
export const SESSION_HEADERS_FIRST = ["x-session-id", "x-claude-code-session-id"];
export const SESSION_HEADERS_THEN = [
  "session-id",
  "thread-id",
  "session_id",
  "conversation_id",
  "x-opencode-session",
];

const LEGACY_USER_ID_SESSION = /_session_([0-9A-Za-z-]{8,})$/;

const headerValue = (headers: Readonly<Record<string, string | string[] | undefined>>, name: string) => {
  const raw = headers[name];
  return (Array.isArray(raw) ? raw[0] : raw)?.trim();
};

/** The session Claude Code writes into `metadata.user_id`, in either of its shapes. */
export function metadataSession(body: JsonObject | undefined): string | undefined {
  const metadata = body?.metadata;
  const userId = isJsonObject(metadata) ? metadata.user_id : undefined;
  if (typeof userId !== "string" || userId === "") return undefined;
  if (userId.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(userId);
      const session = isJsonObject(parsed) ? parsed.session_id : undefined;
      return typeof session === "string" && session !== "" ? session : undefined;
    } catch {
      return undefined;
    }
  }
  return LEGACY_USER_ID_SESSION.exec(userId)?.[1];
}

export function sessionIdFrom(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body?: JsonObject,
): string {
  for (const name of SESSION_HEADERS_FIRST) {
    const value = headerValue(headers, name);
    if (value) return value;
  }
  const fromMetadata = metadataSession(body);
  if (fromMetadata) return fromMetadata;
  for (const name of SESSION_HEADERS_THEN) {
    const value = headerValue(headers, name);
    if (value) return value;
  }
  return geminiCliRun(headers, body) ?? "";
}

/** The session of a Gemini CLI run: a hash of its first turn (see `sessionIdFrom`). */
function geminiCliRun(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: JsonObject | undefined,
): string | undefined {
  if (!headerValue(headers, "user-agent")?.startsWith("GeminiCLI")) return undefined;
  const contents = body?.contents;
  const first = Array.isArray(contents) ? contents[0] : undefined;
  if (first === undefined) return undefined;
  const hash = createHash("sha256");
  hash.update(headerValue(headers, "x-gemini-api-privileged-user-id") ?? "");
  hash.update("\0");
  hash.update(JSON.stringify(first));
  return `gemini-cli-${hash.digest("base64url").slice(0, 32)}`;
}
