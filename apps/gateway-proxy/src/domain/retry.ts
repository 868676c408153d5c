/**
 * Which failures a request tries again, and when. Only a failure before any byte of the answer
 * reached the client can be: the vendor said it is overloaded or rate-limited (429, 529), broke
 * (500, 502, 503, 504), or never answered (connect error, no headers in time, a stream that died
 * before its first byte). A client error (400, 401, 403, 404, 422, ...) would fail anywhere.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 529 || (status >= 500 && status <= 504 && status !== 501);
}

/** Wait before trying the same provider again when it said nothing: short, as the budget is shared. */
export const SAME_PROVIDER_BACKOFF_MS = 250;

/**
 * The vendor's `retry-after-ms` (OpenAI, Azure) or `retry-after` (seconds, or an HTTP date), in
 * milliseconds; 0 when it said nothing usable.
 */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number {
  const ms = Number(first(headers["retry-after-ms"]));
  if (Number.isFinite(ms) && ms > 0) return Math.ceil(ms);
  const value = first(headers["retry-after"]);
  if (value === undefined || value === "") return 0;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? Math.ceil(seconds * 1000) : 0;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : Math.max(0, date - now);
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** What an attempt that got no status failed of, as its row lists it. */
export function networkError(error: unknown): "timeout" | "connect_failed" | "upstream_closed" {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT")
    return "timeout";
  if (code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "UND_ERR_CLOSED")
    return "upstream_closed";
  return "connect_failed";
}
