import type { HttpRequest } from "@agentnet/service-kit";
import { eachChunk } from "../each-chunk";

export class BodyTooLarge extends Error {
  override readonly name = "BodyTooLarge";
}

export class BodyNotUtf8 extends Error {
  override readonly name = "BodyNotUtf8";
}

// Fatal: invalid UTF-8 would otherwise become U+FFFD in the model, the prompt and the row. The BOM
// is kept, as Buffer#toString keeps it, so what JSON.parse sees is unchanged for valid bodies.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// Closed before its end: the client went away mid-body (or while the request waited for its
// caller to be known: then no event comes).
const CLOSED_EARLY = "the request closed before its body ended";

/** A request body: its bytes as they came, and their text. */
export interface Body {
  text: string;
  bytes: Buffer;
}

const NO_BODY: Body = { text: "", bytes: Buffer.alloc(0) };

/**
 * Reads the request body as UTF-8, refusing (before buffering it all) one larger than `limit`
 * bytes, and one that is not valid UTF-8, as the API does.
 */
export async function readBody(req: HttpRequest, limit: number): Promise<Body> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await eachChunk(
      req,
      (chunk) => {
        size += chunk.length;
        if (size > limit) throw new BodyTooLarge();
        chunks.push(chunk);
      },
      CLOSED_EARLY,
    );
  } catch (error) {
    // The rest is read and dropped; the connection stays usable. (Node destroys a server request
    // left by a `for await` with its socket detached first, so that kept the connection too.)
    if (error instanceof BodyTooLarge) req.resume();
    throw error;
  }
  if (chunks.length === 0) return NO_BODY;
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  try {
    return { text: utf8.decode(bytes), bytes };
  } catch {
    throw new BodyNotUtf8();
  }
}

/** Headers clients put their key in besides `Authorization`: Anthropic's, Azure's and Google's SDKs. */
const KEY_HEADERS = ["x-api-key", "api-key", "x-goog-api-key"] as const;

/**
 * The agn_ token wherever the client's SDK puts its key: `Authorization: Bearer`, `x-api-key`,
 * `api-key`, `x-goog-api-key`, or (Gemini clients only, `query` given) the `key` query parameter.
 */
export function callerToken(req: HttpRequest, query = ""): string | undefined {
  const authorization = req.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return match[1];
  }
  for (const name of KEY_HEADERS) {
    const value = req.headers[name];
    const key = (Array.isArray(value) ? value[0] : value)?.trim();
    if (key) return key;
  }
  if (query === "") return undefined;
  return new URLSearchParams(query).get("key")?.trim() || undefined;
}

/**
 * The client's address: the socket's, or, behind a trusted load balancer, the X-Forwarded-For entry
 * it appended (the last one): the entries before it are whatever the client sent.
 */
export function sourceIp(req: HttpRequest, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers["x-forwarded-for"];
    const last = (Array.isArray(forwarded) ? forwarded.join(",") : forwarded)?.split(",").at(-1)?.trim();
    if (last) return last;
  }
  const address = req.socket.remoteAddress ?? "";
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}
