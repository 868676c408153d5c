/**
 * Anthropic Messages API answers as fake vendors send them (Anthropic's /v1/messages and Claude on
 * Vertex's rawPredict and streamRawPredict alike): one message, or the event stream that says the
 * same. One copy for every fake vendor, so they agree on the wire.
 */

/** Anthropic's `usage` object: cache reads and writes are additive to input_tokens. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  /** The sum of `cache_creation`'s two lifetimes, when that is given. */
  cache_creation_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface AnthropicAnswer {
  /** The `model` the answer names (the request's, or Vertex's full id). */
  model: unknown;
  usage: AnthropicUsage;
  /** The text, in the pieces a stream sends as its deltas (one piece for a whole message). */
  texts: string[];
  id?: string;
  stopReason?: string;
}

/** One event of a stream: its name (`event:`) and what its `data:` line holds. */
export interface AnthropicEvent {
  event: string;
  data: Record<string, unknown>;
}

/** The message a non-streamed request gets. */
export function anthropicMessage(answer: AnthropicAnswer): Record<string, unknown> {
  return {
    id: answer.id ?? "msg_1",
    type: "message",
    role: "assistant",
    model: answer.model,
    content: [{ type: "text", text: answer.texts.join("") }],
    stop_reason: answer.stopReason ?? "end_turn",
    stop_sequence: null,
    usage: answer.usage,
  };
}

/** A stream's first event: the message without content, its whole usage but one output token so far. */
export function anthropicMessageStart(answer: AnthropicAnswer): AnthropicEvent {
  const message = {
    ...anthropicMessage(answer),
    content: [],
    stop_reason: null,
    usage: { ...answer.usage, output_tokens: 1 },
  };
  return { event: "message_start", data: { type: "message_start", message } };
}

/**
 * The stream of the same message: message_start, one text block of a delta per piece,
 * message_delta with the stop reason and the output tokens, message_stop.
 */
export function anthropicStreamEvents(answer: AnthropicAnswer): AnthropicEvent[] {
  const event = (type: string, data: Record<string, unknown> = {}): AnthropicEvent => ({
    event: type,
    data: { type, ...data },
  });
  return [
    anthropicMessageStart(answer),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...answer.texts.map((text) =>
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
    ),
    event("content_block_stop", { index: 0 }),
    event("message_delta", {
      delta: { stop_reason: answer.stopReason ?? "end_turn", stop_sequence: null },
      usage: { output_tokens: answer.usage.output_tokens },
    }),
    event("message_stop"),
  ];
}

/** An event as it goes on the wire. */
export const sseEvent = ({ event, data }: AnthropicEvent): string =>
  `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** `text` split into words, each after the first with its leading space: a stream's deltas. */
export const wordPieces = (text: string): string[] =>
  text.split(" ").map((word, i) => (i === 0 ? word : ` ${word}`));
