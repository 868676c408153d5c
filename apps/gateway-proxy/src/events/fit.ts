import type { GatewayRequestEvent } from "@agentnet/contracts";

/** Ends every value cut to fit, so a log reader sees it is not what the request said. */
export const TRUNCATED_MARK = "…[truncated]";

/**
 * The fields a request (or its capture) can make long; everything else is bounded by the
 * configuration or by the event's shape. None of them is needed to account for the request.
 */
const CUTTABLE = [
  "request_prompt",
  "response_completion",
  "model",
  "path",
  "session_id",
  "source_ip",
  "host",
] as const satisfies readonly (keyof GatewayRequestEvent)[];

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * The event within `maxBytes` of JSON, so a request with a giant model name or prompt is still
 * logged and charged: its free-text fields are cut (and marked), longest first so the fewest are
 * touched, until it fits. Undefined when even cutting them all leaves it too large. An event that
 * fits is returned as it is.
 */
export function fitEvent(event: GatewayRequestEvent, maxBytes: number): GatewayRequestEvent | undefined {
  let size = jsonBytes(event);
  if (size <= maxBytes) return event;
  const fitted: GatewayRequestEvent = { ...event };
  const markBytes = jsonBytes(TRUNCATED_MARK) - 2;
  const longestFirst = CUTTABLE.map((field) => ({ field, value: fitted[field] }))
    .filter((entry): entry is { field: (typeof CUTTABLE)[number]; value: string } => {
      return typeof entry.value === "string" && entry.value.length > TRUNCATED_MARK.length;
    })
    .sort((a, b) => b.value.length - a.value.length);
  for (const { field, value } of longestFirst) {
    const room = jsonBytes(value) - 2 - (size - maxBytes) - markBytes;
    fitted[field] = `${prefixWithin(value, Math.max(0, room))}${TRUNCATED_MARK}`;
    size = jsonBytes(fitted);
    if (size <= maxBytes) return fitted;
  }
  return undefined;
}

/** The longest prefix of `text` taking at most `budget` bytes inside a JSON string. */
function prefixWithin(text: string, budget: number): string {
  let end = Math.min(text.length, budget);
  let bytes = jsonBytes(text.slice(0, end)) - 2;
  // Multi-byte and escaped characters take more than one byte each: shrink in proportion until it fits.
  while (bytes > budget) {
    end = Math.min(end - 1, Math.floor((end * budget) / bytes));
    bytes = jsonBytes(text.slice(0, end)) - 2;
  }
  // Never end on the first half of a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}
