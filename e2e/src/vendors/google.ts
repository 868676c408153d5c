import type { ServerResponse } from "node:http";
import { FakeUpstream, type SeenRequest } from "../upstream";
import { bearerToken, drained, sendJson } from "./vendor-http";

/** Gemini's `usageMetadata` counts, as the fake vendor reports them on its answers. */
export interface GeminiUsage {
  promptTokenCount: number;
  /** Part of promptTokenCount (Gemini reports the cached prompt inside the prompt). */
  cachedContentTokenCount: number;
  candidatesTokenCount: number;
  thoughtsTokenCount: number;
  toolUsePromptTokenCount: number;
}

/**
 * The credential the fake vendor takes, as the test set up its provider: the Gemini API key
 * (`x-goog-api-key`, or Gemini's `?key=`), and for Vertex a test of the `Authorization: Bearer`
 * token (a minted one: `GoogleTokenServer.accepts`; a bare one: equality).
 */
export interface GoogleCredentials {
  apiKey?: string;
  acceptsBearer?: (token: string) => boolean;
}

const GEMINI_PATH = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const VERTEX_PATH =
  /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const MODEL_LIST = /^\/(v1beta|v1)\/models$/;
const VERTEX_MODEL_LIST = /^\/(v1|v1beta1)\/publishers\/google\/models$/;

/** Google's error statuses by HTTP status, as its APIs name them. */
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

/**
 * A local Google vendor: the Gemini API (`/v1beta/models/{m}:generateContent`,
 * `:streamGenerateContent` as SSE with `?alt=sse` or else a streamed JSON array, `:countTokens`,
 * `GET /v1beta/models`, and the same under `/v1/`) and Gemini on Vertex
 * (`/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:…`, and Vertex's listing
 * `GET /v1beta1/publishers/google/models`). It answers `reply` with
 * `geminiUsage`, records every request in `seen` (refused ones too) and refuses any credential but
 * `credentials`' with Google's 401 (`refused` counts them).
 */
export class FakeGoogle extends FakeUpstream {
  geminiUsage: GeminiUsage = {
    promptTokenCount: 1_200,
    cachedContentTokenCount: 400,
    candidatesTokenCount: 30,
    thoughtsTokenCount: 50,
    toolUsePromptTokenCount: 0,
  };
  /**
   * The parts of the next answers, in order, each instead of `reply` (a `functionCall` makes an
   * agent run a tool and ask again).
   */
  nextAnswers: object[][] = [];
  /** Words per streamed chunk. */
  wordsPerChunk = 8;
  /** Requests refused for their credential. */
  refused = 0;

  constructor(public credentials: GoogleCredentials = {}) {
    super();
    this.reply = "Hello from Gemini";
  }

  protected override respond(res: ServerResponse, path: string, _body: Record<string, unknown>) {
    // FakeUpstream recorded this request just before calling here, in the same turn.
    const request = this.last as SeenRequest;
    const query = new URLSearchParams(request.query);
    const gemini = GEMINI_PATH.exec(path);
    const vertex = VERTEX_PATH.exec(path);
    if (request.method === "GET" && MODEL_LIST.test(path)) {
      if (!this.hasApiKey(request, query)) return this.refuse(res);
      return sendJson(res, 200, this.modelList());
    }
    if (request.method === "GET" && VERTEX_MODEL_LIST.test(path)) {
      if (!this.hasBearer(request)) return this.refuse(res);
      return sendJson(res, 200, this.publisherModelList());
    }
    if (request.method !== "POST" || (!gemini && !vertex)) {
      return this.error(res, 404, `Method or path not found: ${request.method} ${path}`);
    }
    if (gemini ? !this.hasApiKey(request, query) : !this.hasBearer(request)) return this.refuse(res);
    const [model = "", method = ""] = gemini ? [gemini[2], gemini[3]] : [vertex?.[4], vertex?.[5]];
    const onVertex = vertex !== null;
    if (method === "countTokens") {
      return sendJson(res, 200, {
        totalTokens: this.geminiUsage.promptTokenCount,
        ...(onVertex
          ? { totalBillableCharacters: this.geminiUsage.promptTokenCount * 4 }
          : { promptTokensDetails: [{ modality: "TEXT", tokenCount: this.geminiUsage.promptTokenCount }] }),
      });
    }
    const parts = this.nextAnswers.shift();
    if (method === "generateContent") return sendJson(res, 200, this.answer(model, onVertex, parts));
    const chunks = this.chunks(model, onVertex, parts);
    return query.get("alt") === "sse" ? this.sseStream(res, chunks) : this.arrayStream(res, chunks);
  }

  private hasApiKey(request: SeenRequest, query: URLSearchParams): boolean {
    const key = request.headers["x-goog-api-key"] ?? query.get("key");
    return this.credentials.apiKey !== undefined && key === this.credentials.apiKey;
  }

  private hasBearer(request: SeenRequest): boolean {
    const token = bearerToken(request);
    return token !== undefined && this.credentials.acceptsBearer?.(token) === true;
  }

  private refuse(res: ServerResponse) {
    this.refused++;
    return this.error(res, 401, "Request had invalid authentication credentials.");
  }

  private error(res: ServerResponse, status: number, message: string) {
    return sendJson(res, status, {
      error: { code: status, message, status: STATUS_NAMES[status] ?? "UNKNOWN" },
    });
  }

  /** The whole usage, as a finished answer (and a stream's last chunk) reports it. */
  private usageMetadata(onVertex: boolean) {
    const u = this.geminiUsage;
    return {
      promptTokenCount: u.promptTokenCount,
      candidatesTokenCount: u.candidatesTokenCount,
      totalTokenCount:
        u.promptTokenCount + u.toolUsePromptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount,
      ...(u.cachedContentTokenCount > 0 ? { cachedContentTokenCount: u.cachedContentTokenCount } : {}),
      ...(u.thoughtsTokenCount > 0 ? { thoughtsTokenCount: u.thoughtsTokenCount } : {}),
      ...(u.toolUsePromptTokenCount > 0 ? { toolUsePromptTokenCount: u.toolUsePromptTokenCount } : {}),
      promptTokensDetails: [{ modality: "TEXT", tokenCount: u.promptTokenCount }],
      ...(onVertex ? { trafficType: "ON_DEMAND" } : {}),
    };
  }

  /** A GenerateContentResponse whose candidate says `parts`; the last one says why it finished. */
  private chunk(model: string, onVertex: boolean, parts: object[], last: boolean, usage: object) {
    return {
      candidates: [
        {
          content: { role: "model", parts },
          ...(last ? { finishReason: "STOP" } : {}),
          index: 0,
        },
      ],
      usageMetadata: usage,
      modelVersion: model,
      responseId: "fake-google-response",
      ...(onVertex ? { createTime: "2026-11-26T00:00:00.000000Z" } : {}),
    };
  }

  private answer(model: string, onVertex: boolean, parts: object[] | undefined) {
    return this.chunk(model, onVertex, parts ?? [{ text: this.reply }], true, this.usageMetadata(onVertex));
  }

  /**
   * The reply in chunks: each but the last reports the prompt so far, the last the whole usage.
   * Parts given (the next of `nextAnswers`) are one chunk.
   */
  private chunks(model: string, onVertex: boolean, parts: object[] | undefined) {
    if (parts) return [this.chunk(model, onVertex, parts, true, this.usageMetadata(onVertex))];
    const words = this.reply.split(" ");
    const texts: string[] = [];
    for (let i = 0; i < words.length; i += this.wordsPerChunk) {
      texts.push((i === 0 ? "" : " ") + words.slice(i, i + this.wordsPerChunk).join(" "));
    }
    const u = this.geminiUsage;
    const sofar = { promptTokenCount: u.promptTokenCount, totalTokenCount: u.promptTokenCount };
    return texts.map((text, i) => {
      const last = i === texts.length - 1;
      return this.chunk(model, onVertex, [{ text }], last, last ? this.usageMetadata(onVertex) : sofar);
    });
  }

  private async sseStream(res: ServerResponse, chunks: object[]) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const chunk of chunks) {
      if (res.destroyed) return;
      // Google ends each event with CRLF pairs.
      if (!res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`)) await drained(res);
    }
    res.end();
  }

  /** Without `alt=sse`: one JSON array, written element by element as Google does. */
  private async arrayStream(res: ServerResponse, chunks: object[]) {
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    for (const [i, chunk] of chunks.entries()) {
      if (res.destroyed) return;
      const text = `${i === 0 ? "[" : "\n,\r\n"}${JSON.stringify(chunk, null, 2)}`;
      if (!res.write(text)) await drained(res);
    }
    res.end("\n]");
  }

  private modelList() {
    const model = (name: string, displayName: string) => ({
      name: `models/${name}`,
      version: "001",
      displayName,
      inputTokenLimit: 1_048_576,
      outputTokenLimit: 65_536,
      supportedGenerationMethods: ["generateContent", "countTokens"],
    });
    return {
      models: [model("gemini-2.5-flash", "Gemini 2.5 Flash"), model("gemini-2.5-pro", "Gemini 2.5 Pro")],
    };
  }

  /** Vertex's Model Garden listing of Google's models (`GET /v1beta1/publishers/google/models`). */
  private publisherModelList() {
    return {
      publisherModels: ["gemini-2.5-flash", "gemini-2.5-pro"].map((name) => ({
        name: `publishers/google/models/${name}`,
        versionId: "001",
        openSourceCategory: "PROPRIETARY",
        launchStage: "GA",
      })),
    };
  }
}
