import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AnthropicAnswer,
  anthropicMessage,
  anthropicStreamEvents,
  wordPieces,
} from "@agentnet/testkit/anthropic-messages";
import {
  asksForUsage,
  chatCompletion,
  chatCompletionChunks,
  type OpenAiAnswer,
  responseEvents,
  responseObject,
} from "@agentnet/testkit/openai-answers";

/** What a fake vendor reports as usage: OpenAI-shape and Anthropic-shape fields in one place. */
export interface FakeUsage {
  input: number;
  output: number;
  /** OpenAI: cached subset of input. Anthropic: cache reads (additive). */
  cached: number;
  /** Anthropic only: cache writes (additive). */
  creation: number;
}

/** A tool call a fake vendor answers with in place of its text reply. */
export interface FakeToolCall {
  /** Its id: Anthropic's `tool_use` id, the Responses API's `call_id`. */
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** The Responses API's tool namespace the function is in (Codex lists each MCP server's tools in one). */
  namespace?: string;
}

/**
 * Picks one turn's answer from the request's body: a tool call, or undefined for the text reply.
 * An agent's turns scripted by what the conversation holds so far (a tool result answers the call).
 */
export type FakeTurns = (body: Record<string, unknown>) => FakeToolCall | undefined;

export interface SeenRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
  /** The body as it arrived, byte for byte. */
  text: string;
}

/**
 * A local server speaking the OpenAI (chat, responses, embeddings) and Anthropic (messages) wire
 * formats, streaming and not, with cache token fields. `holdStream` makes a stream send its first
 * event and wait for `release()` (or `breakHeld()`), so a test can see chunks arrive before the
 * upstream finished and can abort mid-stream.
 */
export class FakeUpstream {
  usage: FakeUsage = { input: 100, output: 20, cached: 0, creation: 0 };
  reply = "Hello from upstream";
  holdStream = false;
  /** Set to answer some turns with a tool call (Anthropic Messages and the Responses API). */
  turns: FakeTurns | undefined;
  seen: SeenRequest[] = [];
  /** Requests whose client went away before the answer was complete. */
  aborted = 0;
  private releases: ((broken: boolean) => void)[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  release(): void {
    for (const release of this.releases.splice(0)) release(false);
  }

  /** Cuts the connection of each held stream instead of finishing it, as a vendor failing mid-stream does. */
  breakHeld(): void {
    for (const release of this.releases.splice(0)) release(true);
  }

  get last(): SeenRequest | undefined {
    return this.seen[this.seen.length - 1];
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const [path = "", query = ""] = (req.url ?? "").split("?");
    this.seen.push({ method: req.method ?? "", path, query, headers: req.headers, body, text });
    res.on("close", () => {
      if (!res.writableFinished) this.aborted++;
    });
    return this.respond(res, path, body);
  }

  /** Answers a request whose body was read and recorded (a failing vendor fails some first). */
  protected respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    if (path.endsWith("/v1/messages/count_tokens")) return this.json(res, { input_tokens: this.usage.input });
    if (path.endsWith("/v1/messages"))
      return body.stream ? this.anthropicStream(res, body) : this.anthropic(res, body);
    if (path.endsWith("/v1/chat/completions"))
      return body.stream ? this.chatStream(res, body) : this.chat(res, body);
    if (path.endsWith("/v1/responses"))
      return body.stream ? this.responsesStream(res, body) : this.responses(res, body);
    if (path.endsWith("/v1/embeddings")) return this.embeddings(res, body);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
  }

  private json(res: ServerResponse, body: unknown) {
    const payload = JSON.stringify(body);
    res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_upstream" });
    res.end(payload);
  }

  private async sse(res: ServerResponse, events: { event?: string; data: unknown }[]) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const [first, ...rest] = events;
    const write = (e: { event?: string; data: unknown }) =>
      res.write(
        `${e.event ? `event: ${e.event}\n` : ""}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`,
      );
    if (first) write(first);
    const broken = this.holdStream && (await new Promise<boolean>((resolve) => this.releases.push(resolve)));
    if (broken) res.destroy();
    if (res.destroyed) return;
    for (const e of rest) write(e);
    res.end();
  }

  /** The reply as an OpenAI-format answer of the fixed usage. */
  private openaiAnswer(body: Record<string, unknown>, texts: string[]): OpenAiAnswer {
    const { input, output, cached } = this.usage;
    return { model: body.model, usage: { input, output, cached }, texts };
  }

  private chat(res: ServerResponse, body: Record<string, unknown>) {
    this.json(res, chatCompletion(this.openaiAnswer(body, [this.reply])));
  }

  private chatStream(res: ServerResponse, body: Record<string, unknown>) {
    const chunks = chatCompletionChunks(this.openaiAnswer(body, wordPieces(this.reply)), asksForUsage(body));
    return this.sse(res, [...chunks.map((data) => ({ data })), { data: "[DONE]" }]);
  }

  private responses(res: ServerResponse, body: Record<string, unknown>) {
    const call = this.turns?.(body);
    const answer = responseObject(this.openaiAnswer(body, [this.reply]));
    this.json(res, call ? { ...answer, output: [functionCallItem(call)] } : answer);
  }

  /** The Responses API's streaming events, as Codex reads them; usage comes in `response.completed`. */
  private responsesStream(res: ServerResponse, body: Record<string, unknown>) {
    const call = this.turns?.(body);
    const answer = this.openaiAnswer(body, [this.reply]);
    return this.sse(res, call ? functionCallEvents(responseObject(answer), call) : responseEvents(answer));
  }

  private embeddings(res: ServerResponse, body: Record<string, unknown>) {
    const vector = [0.5, 0.25, 0.125];
    const base64 = Buffer.from(new Float32Array(vector).buffer).toString("base64");
    this.json(res, {
      object: "list",
      // The openai SDK asks for base64 (little-endian float32) by default.
      data: [
        { object: "embedding", index: 0, embedding: body.encoding_format === "base64" ? base64 : vector },
      ],
      model: body.model,
      usage: { prompt_tokens: this.usage.input, total_tokens: this.usage.input },
    });
  }

  private anthropicUsage() {
    const u = this.usage;
    return {
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_input_tokens: u.cached,
      cache_creation_input_tokens: u.creation,
    };
  }

  /** The reply as an Anthropic answer, in words for a stream. */
  private anthropicAnswer(body: Record<string, unknown>): AnthropicAnswer {
    return { model: body.model, usage: this.anthropicUsage(), texts: wordPieces(this.reply) };
  }

  private anthropic(res: ServerResponse, body: Record<string, unknown>) {
    const call = this.turns?.(body);
    const message = anthropicMessage({
      ...this.anthropicAnswer(body),
      ...(call ? { id: `msg_${call.id}` } : {}),
    });
    this.json(
      res,
      call
        ? {
            ...message,
            content: [{ type: "tool_use", id: call.id, name: call.name, input: call.input }],
            stop_reason: "tool_use",
          }
        : message,
    );
  }

  private anthropicStream(res: ServerResponse, body: Record<string, unknown>) {
    const call = this.turns?.(body);
    const answer = this.anthropicAnswer(body);
    // A message id of its own: Claude Code joins the blocks of messages that share one.
    return this.sse(
      res,
      call ? toolUseEvents({ ...answer, id: `msg_${call.id}` }, call) : anthropicStreamEvents(answer),
    );
  }
}

/**
 * An Anthropic stream whose one content block is a `tool_use`, its input in one JSON delta, ending
 * with stop reason `tool_use`.
 */
function toolUseEvents(answer: AnthropicAnswer, call: FakeToolCall) {
  const [start, ...rest] = anthropicStreamEvents({ ...answer, stopReason: "tool_use" });
  const end = rest.filter((e) => e.event === "message_delta" || e.event === "message_stop");
  const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, ...data } });
  return [
    ...(start ? [start] : []),
    event("content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    }),
    event("content_block_delta", {
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(call.input) },
    }),
    event("content_block_stop", { index: 0 }),
    ...end,
  ];
}

/** The Responses API's output item of a function call, completed. */
const functionCallItem = (call: FakeToolCall) => ({
  type: "function_call",
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.name,
  ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
  arguments: JSON.stringify(call.input),
  status: "completed",
});

/** The Responses API's streaming events of an answer whose one output is a function call. */
function functionCallEvents(done: Record<string, unknown>, call: FakeToolCall) {
  const item = functionCallItem(call);
  const events: Record<string, unknown>[] = [
    { type: "response.created", response: { ...done, status: "in_progress", output: [], usage: null } },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, arguments: "", status: "in_progress" },
    },
    {
      type: "response.function_call_arguments.delta",
      item_id: item.id,
      output_index: 0,
      delta: item.arguments,
    },
    {
      type: "response.function_call_arguments.done",
      item_id: item.id,
      output_index: 0,
      arguments: item.arguments,
    },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { ...done, output: [item] } },
  ];
  return events.map((data, sequence) => ({
    event: String(data.type),
    data: { ...data, sequence_number: sequence },
  }));
}
