/**
 * The demo upstream `agentnet up` runs on loopback for `agentnet quickstart` without a vendor key:
 * it speaks the OpenAI (models, chat, responses, embeddings) and Anthropic (models, messages,
 * count_tokens) wire formats, streaming and not, with a canned answer and usage counted from the
 * request's size. Nothing leaves the machine. Logs `{"ready":true}` once listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const ANSWER =
  "Hello from the agentnet demo upstream. Point a provider at a real vendor (agentnet quickstart --upstream-url ... --api-key ...) for real answers.";
const MODELS = ["demo-chat", "claude-demo"];

type Body = Record<string, unknown>;

const usageOf = (body: Body) => ({
  input: Math.max(1, Math.ceil(JSON.stringify(body.messages ?? body.input ?? "").length / 4)),
  output: Math.ceil(ANSWER.length / 4),
});

function json(res: ServerResponse, status: number, payload: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}

function sse(res: ServerResponse, events: { event?: string; data: unknown }[]) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    res.write(
      `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    );
  }
  res.end();
}

function chat(res: ServerResponse, body: Body) {
  const { input, output } = usageOf(body);
  const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const base = { id: "chatcmpl-demo", created: Math.floor(Date.now() / 1000), model: body.model };
  if (body.stream !== true) {
    return json(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: ANSWER }, finish_reason: "stop" }],
      usage,
    });
  }
  const chunk = (delta: Body, finish: string | null) => ({
    data: { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] },
  });
  sse(res, [
    chunk({ role: "assistant", content: ANSWER }, null),
    chunk({}, "stop"),
    { data: { ...base, object: "chat.completion.chunk", choices: [], usage } },
    { data: "[DONE]" },
  ]);
}

function responses(res: ServerResponse, body: Body) {
  const { input, output } = usageOf(body);
  const item = {
    type: "message",
    id: "msg_demo",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: ANSWER, annotations: [] }],
  };
  const done = {
    id: "resp_demo",
    object: "response",
    status: "completed",
    model: body.model,
    output: [item],
    usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
  };
  if (body.stream !== true) return json(res, 200, done);
  const events: Body[] = [
    { type: "response.created", response: { ...done, status: "in_progress", output: [], usage: null } },
    {
      type: "response.output_text.delta",
      item_id: "msg_demo",
      output_index: 0,
      content_index: 0,
      delta: ANSWER,
    },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: done },
  ];
  sse(
    res,
    events.map((data, sequence) => ({
      event: String(data.type),
      data: { ...data, sequence_number: sequence },
    })),
  );
}

function messages(res: ServerResponse, body: Body) {
  const { input, output } = usageOf(body);
  const message = {
    id: "msg_demo",
    type: "message",
    role: "assistant",
    model: body.model,
    stop_sequence: null,
  };
  if (body.stream !== true) {
    return json(res, 200, {
      ...message,
      content: [{ type: "text", text: ANSWER }],
      stop_reason: "end_turn",
      usage: { input_tokens: input, output_tokens: output },
    });
  }
  sse(res, [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: input, output_tokens: 1 },
        },
      },
    },
    {
      event: "content_block_start",
      data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    },
    {
      event: "content_block_delta",
      data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: ANSWER } },
    },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: output },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

function models(req: IncomingMessage, res: ServerResponse) {
  if (req.headers["anthropic-version"]) {
    return json(res, 200, {
      data: MODELS.map((id) => ({ type: "model", id, display_name: id, created_at: "2026-01-01T00:00:00Z" })),
      has_more: false,
      first_id: MODELS[0],
      last_id: MODELS.at(-1),
    });
  }
  return json(res, 200, {
    object: "list",
    data: MODELS.map((id) => ({ id, object: "model", owned_by: "agentnet" })),
  });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method === "GET" && path === "/v1/models") return models(req, res);
    let body: Body = {};
    try {
      body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body) : {};
    } catch {
      return json(res, 400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
    }
    if (req.method === "POST" && path === "/v1/chat/completions") return chat(res, body);
    if (req.method === "POST" && path === "/v1/responses") return responses(res, body);
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      return json(res, 200, { input_tokens: usageOf(body).input });
    }
    if (req.method === "POST" && path === "/v1/messages") return messages(res, body);
    if (req.method === "POST" && path === "/v1/embeddings") {
      return json(res, 200, {
        object: "list",
        data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2, 0.3] }],
        model: body.model,
        usage: { prompt_tokens: usageOf(body).input, total_tokens: usageOf(body).input },
      });
    }
    json(res, 404, {
      error: { message: `${req.method} ${path} is not served by the demo upstream`, type: "not_found" },
    });
  });
});

server.listen(Number(process.env.AGN_DEMO_UPSTREAM_PORT ?? 8091), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}` })}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
