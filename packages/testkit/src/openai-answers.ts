/**
 * OpenAI-format answers as fake vendors send them (OpenAI, Azure, Mistral and every
 * OpenAI-compatible API): a chat completion or the chunks that stream it, a Responses object or its
 * events, an embedding. One copy for every fake vendor, so they agree on the wire.
 */

/** Token counts of an answer; `cached` is part of `input`, as OpenAI counts it. */
export interface OpenAiUsage {
  input: number;
  output: number;
  cached?: number;
}

export interface OpenAiAnswer {
  /** The `model` the answer names (the request's). */
  model: unknown;
  usage: OpenAiUsage;
  /** The text, in the pieces a stream sends as its deltas (one piece for a whole answer). */
  texts: string[];
  id?: string;
}

const CREATED = 1_700_000_000;

/** Chat Completions' `usage` object. */
export function chatUsage(usage: OpenAiUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    ...(usage.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached } }),
  };
}

/** The chat completion a non-streamed request gets. */
export function chatCompletion(answer: OpenAiAnswer): Record<string, unknown> {
  return {
    id: answer.id ?? "chatcmpl-1",
    object: "chat.completion",
    created: CREATED,
    model: answer.model,
    choices: [
      { index: 0, message: { role: "assistant", content: answer.texts.join("") }, finish_reason: "stop" },
    ],
    usage: chatUsage(answer.usage),
  };
}

/**
 * The chunks that stream the same completion: the role, a delta per piece, the finish, and when the
 * request asked for it (`stream_options.include_usage`) a last chunk with the usage, every chunk
 * before it saying `usage: null`, as OpenAI sends them.
 */
export function chatCompletionChunks(answer: OpenAiAnswer, includeUsage: boolean): Record<string, unknown>[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id: answer.id ?? "chatcmpl-1",
    object: "chat.completion.chunk",
    created: CREATED,
    model: answer.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return [
    chunk({ role: "assistant", content: "" }, null),
    ...answer.texts.map((text) => chunk({ content: text }, null)),
    chunk({}, "stop"),
    ...(includeUsage
      ? [
          {
            id: answer.id ?? "chatcmpl-1",
            object: "chat.completion.chunk",
            created: CREATED,
            model: answer.model,
            choices: [],
            usage: chatUsage(answer.usage),
          },
        ]
      : []),
  ];
}

/** Whether a chat request asked for its stream's usage. */
export const asksForUsage = (body: Record<string, unknown>): boolean =>
  (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;

/** A chunk as it goes on the wire, and the stream's last line. */
export const dataEvent = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;
export const DONE_EVENT = "data: [DONE]\n\n";

/** The Responses API's object for the answer, completed. */
export function responseObject(answer: OpenAiAnswer): Record<string, unknown> & { output: unknown[] } {
  const { usage } = answer;
  return {
    id: answer.id ?? "resp_1",
    object: "response",
    created_at: CREATED,
    status: "completed",
    model: answer.model,
    output: [
      {
        type: "message",
        id: "msg_1",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: answer.texts.join(""), annotations: [] }],
      },
    ],
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached ?? 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
  };
}

/**
 * The Responses API's streaming events for the answer, as Codex reads them, each named by its type:
 * usage comes in `response.completed`.
 */
export function responseEvents(answer: OpenAiAnswer): { event: string; data: Record<string, unknown> }[] {
  const done = responseObject(answer);
  const [item] = done.output as Record<string, unknown>[];
  const events: Record<string, unknown>[] = [
    { type: "response.created", response: { ...done, status: "in_progress", output: [], usage: null } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    },
    ...answer.texts.map((delta) => ({
      type: "response.output_text.delta",
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      delta,
    })),
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: done },
  ];
  return events.map((data, sequence) => ({
    event: String(data.type),
    data: { ...data, sequence_number: sequence },
  }));
}
