import type { ServerResponse } from "node:http";
import {
  type AnthropicAnswer,
  type AnthropicUsage,
  anthropicMessage,
  anthropicStreamEvents,
  sseEvent,
  wordPieces,
} from "@agentnet/testkit/anthropic-messages";
import { FakeUpstream, type SeenRequest } from "../upstream";
import { bearerToken, drained, sendJson } from "./vendor-http";

/** The Messages API version Vertex documents for the body of Claude requests. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/**
 * The dated API version `@anthropic-ai/vertex-sdk` 1.x sends as `anthropic_version` (1.0.0, "add
 * support for new API version 2026-10-21": it copies the base SDK's `anthropic-version` header into
 * the body). Anthropic's own Vertex client sends it to Vertex, so Vertex takes it.
 */
export const SDK_ANTHROPIC_VERSION = "2026-10-21";

/** Claude's usage as the fake vendor reports it: cache reads, and cache writes by their lifetime. */
export interface ClaudeUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

const RAW_PREDICT =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

/**
 * A local Vertex AI serving Claude: `POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict`
 * (a message) and `:streamRawPredict` (its event stream), and `…/models/count-tokens:rawPredict`.
 * As Vertex does, it takes only `Authorization: Bearer` tokens `acceptsBearer` likes (else Google's
 * 401), and a body without `model` (token counting: with it) whose `anthropic_version` is one of
 * `anthropicVersions` (else a 400 in Anthropic's error shape, which rawPredict relays). It records
 * every request in `seen`, refused ones too.
 */
export class FakeVertexAnthropic extends FakeUpstream {
  claudeUsage: ClaudeUsage = { input: 100, output: 20, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };
  /** The versions taken in the body's `anthropic_version`; any other is a 400. */
  anthropicVersions = [VERTEX_ANTHROPIC_VERSION, SDK_ANTHROPIC_VERSION];
  /** Requests refused for their credential. */
  refused = 0;
  /** Requests refused for their body (400). */
  invalid: string[] = [];

  constructor(public acceptsBearer: (token: string) => boolean) {
    super();
    this.reply = "Hello from Claude on Vertex";
  }

  protected override respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    // FakeUpstream recorded this request just before calling here, in the same turn.
    const request = this.last as SeenRequest;
    const match = RAW_PREDICT.exec(path);
    if (request.method !== "POST" || !match) {
      return this.googleError(res, 404, "NOT_FOUND", `The requested URL ${path} was not found.`);
    }
    if (!this.hasBearer(request)) {
      this.refused++;
      return this.googleError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    }
    const [, , , model = "", method = ""] = match;
    const counting = model === "count-tokens";
    const problem = this.bodyProblem(body, counting, method);
    if (problem) {
      this.invalid.push(problem);
      return sendJson(res, 400, {
        type: "error",
        error: { type: "invalid_request_error", message: problem },
      });
    }
    if (counting) return sendJson(res, 200, { input_tokens: this.claudeUsage.input });
    // Vertex names the model Anthropic's way in its answers.
    const answer: AnthropicAnswer = {
      model: decodeURIComponent(model).replace("@", "-"),
      id: "msg_vrtx_01",
      usage: this.claudeUsageObject(),
      texts: wordPieces(this.reply),
    };
    if (method === "rawPredict") return sendJson(res, 200, anthropicMessage(answer));
    return this.stream(res, answer);
  }

  private bodyProblem(body: Record<string, unknown>, counting: boolean, method: string) {
    if (counting && method !== "rawPredict") return "count-tokens is served at :rawPredict";
    if (counting && typeof body.model !== "string") return "model: Field required";
    if (!counting && "model" in body) return "model: Extra inputs are not permitted";
    if (body.anthropic_version === undefined) return "anthropic_version: Field required";
    if (!this.anthropicVersions.includes(String(body.anthropic_version))) {
      return `anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`;
    }
    return undefined;
  }

  private hasBearer(request: SeenRequest): boolean {
    const token = bearerToken(request);
    return token !== undefined && this.acceptsBearer(token);
  }

  /** Anthropic's usage: cache reads and writes additive to input, the writes split by lifetime. */
  private claudeUsageObject(): AnthropicUsage {
    const u = this.claudeUsage;
    return {
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_input_tokens: u.cacheRead,
      cache_creation_input_tokens: u.cacheWrite5m + u.cacheWrite1h,
      cache_creation: {
        ephemeral_5m_input_tokens: u.cacheWrite5m,
        ephemeral_1h_input_tokens: u.cacheWrite1h,
      },
    };
  }

  private googleError(res: ServerResponse, status: number, name: string, message: string) {
    return sendJson(res, status, { error: { code: status, message, status: name } });
  }

  /** The event stream, written as fast as the reader takes it; stops when the reader leaves. */
  private async stream(res: ServerResponse, answer: AnthropicAnswer) {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    for (const event of anthropicStreamEvents(answer)) {
      if (res.destroyed) return;
      if (!res.write(sseEvent(event))) await drained(res);
    }
    res.end();
  }
}
