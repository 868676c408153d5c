import type { RequestAttempt } from "@agentnet/contracts";

/** Why an attempt got no status, in words; the proxy's codes (apps/gateway-proxy/src/domain/retry.ts). */
const NETWORK_ERRORS: Record<string, string> = {
  connect_failed: "could not connect",
  timeout: "timed out before the first byte",
  upstream_closed: "connection closed",
  stream_failed_before_first_byte: "stream failed before its first byte",
};

/** "200", "529 (overloaded_error)", "could not connect": what came of one attempt. */
export function attemptOutcome(attempt: RequestAttempt): string {
  const error = NETWORK_ERRORS[attempt.error] ?? attempt.error;
  if (attempt.status === 0) return error || "no answer";
  return error ? `${attempt.status} (${error})` : String(attempt.status);
}

const ordinals = new Intl.PluralRules("en-US", { type: "ordinal" });
const SUFFIXES: Record<string, string> = { one: "st", two: "nd", few: "rd", other: "th" };

/** 1 → "1st", 2 → "2nd", 3 → "3rd", 4 → "4th". */
export const ordinal = (n: number): string => `${n}${SUFFIXES[ordinals.select(n)] ?? "th"}`;

/**
 * The line above a request's attempts: answered when the last attempt got a vendor status below
 * 400 (the row is that attempt's), else every attempt failed and the row holds the last failure.
 */
export function attemptsSummary(attempts: readonly RequestAttempt[]): string {
  const last = attempts.at(-1);
  if (last === undefined) return "";
  const answered = last.status > 0 && last.status < 400 && last.error === "";
  if (answered) return `Answered on the ${ordinal(attempts.length)} attempt`;
  return attempts.length === 1 ? "The only attempt failed" : `All ${attempts.length} attempts failed`;
}
