import type { ServerResponse } from "node:http";
import { FakeUpstream, type SeenRequest } from "../upstream";
import { sendJson } from "./vendor-http";

/**
 * A local Mistral La Plateforme: `POST /v1/chat/completions`, streaming and not, answering
 * `reply` with `usage` in Mistral's shape. As Mistral does, it refuses any field it does not know,
 * `stream_options` among them, with 422 `extra_forbidden`, and puts a stream's usage on its last
 * chunk (the one with `finish_reason`) unasked. It takes only `Bearer <apiKey>` (401 otherwise,
 * counted in `refused`); every request is recorded in `seen`, refused ones too.
 */
export class FakeMistral extends FakeUpstream {
  /** Requests refused for their credential. */
  refused = 0;
  /** Words per streamed chunk. */
  wordsPerChunk = 4;

  constructor(public apiKey: string) {
    super();
    this.reply = "Hello from Mistral";
  }

  protected override respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    // FakeUpstream recorded this request just before calling here, in the same turn.
    const request = this.last as SeenRequest;
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      return this.send(res, 404, { detail: "Not Found" });
    }
    if (request.headers.authorization !== `Bearer ${this.apiKey}`) {
      this.refused++;
      return this.send(res, 401, { detail: "Unauthorized" });
    }
    if ("stream_options" in body) {
      return this.send(res, 422, {
        detail: [
          {
            type: "extra_forbidden",
            loc: ["body", "stream_options"],
            msg: "Extra inputs are not permitted",
            input: body.stream_options,
          },
        ],
      });
    }
    return body.stream === true ? this.stream(res, body) : this.send(res, 200, this.completion(body));
  }

  private send(res: ServerResponse, status: number, body: unknown) {
    sendJson(res, status, body, "application/json");
  }

  private usageInfo() {
    const { input, output } = this.usage;
    return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  }

  private completion(body: Record<string, unknown>) {
    return {
      id: "cmpl-mistral-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: this.reply, tool_calls: null },
          finish_reason: "stop",
        },
      ],
      usage: this.usageInfo(),
    };
  }

  /** Mistral's stream: a role chunk, the text, then `finish_reason` and the usage on one last chunk. */
  private stream(res: ServerResponse, body: Record<string, unknown>) {
    const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: object) => ({
      id: "cmpl-mistral-1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    });
    const words = this.reply.split(" ");
    const pieces: string[] = [];
    for (let i = 0; i < words.length; i += this.wordsPerChunk) {
      pieces.push(`${i === 0 ? "" : " "}${words.slice(i, i + this.wordsPerChunk).join(" ")}`);
    }
    const events = [
      chunk({ role: "assistant", content: "" }, null),
      ...pieces.map((content) => chunk({ content }, null)),
      chunk({ content: "" }, "stop", this.usageInfo()),
    ];
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end("data: [DONE]\n\n");
  }
}
