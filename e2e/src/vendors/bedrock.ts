import type { ServerResponse } from "node:http";
import {
  type AnthropicAnswer,
  type AnthropicUsage,
  anthropicMessage,
  anthropicStreamEvents,
  wordPieces,
} from "@agentnet/testkit/anthropic-messages";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { FakeUpstream, type SeenRequest } from "../upstream";
import { bearerToken, drained } from "./vendor-http";

/** The Messages API version Bedrock takes in the body of Claude requests. */
export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/** IAM access keys the fake vendor knows, as a provider's `aws_access_key` holds them. */
export interface AwsAccessKey {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

/** Claude's usage as the fake vendor reports it (Anthropic's shape: cache reads and writes beside input). */
export interface BedrockUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const header = (value: string) => ({ type: "string" as const, value });

/** One event-stream message, as Bedrock frames its stream events. */
export const eventStreamMessage = (eventType: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: {
      ":event-type": header(eventType),
      ":content-type": header("application/json"),
      ":message-type": header("event"),
    },
    body: fromUtf8(JSON.stringify(payload)),
  });

/** The events of a stream, decoded: each one's `:event-type` and JSON payload (a chunk's `bytes` decoded). */
export function decodeEventStream(bytes: Uint8Array): { type: string; payload: Record<string, unknown> }[] {
  const buffer = Buffer.from(bytes);
  const decoded = [];
  for (let start = 0; start + 4 <= buffer.length; ) {
    const length = buffer.readUInt32BE(start);
    const message = codec.decode(buffer.subarray(start, start + length));
    const type = String(message.headers[":event-type"]?.value ?? message.headers[":exception-type"]?.value);
    let payload = JSON.parse(Buffer.from(message.body).toString("utf8")) as Record<string, unknown>;
    if (type === "chunk" && typeof payload.bytes === "string") {
      payload = JSON.parse(Buffer.from(payload.bytes, "base64").toString("utf8")) as Record<string, unknown>;
    }
    decoded.push({ type, payload });
    start += length;
  }
  return decoded;
}

/** Bedrock adds its own invocation metrics, the answer's counts, to Claude's last event. */
function withMetrics(event: Record<string, unknown>, usage: AnthropicUsage) {
  if (event.type !== "message_stop") return event;
  return {
    ...event,
    "amazon-bedrock-invocationMetrics": {
      inputTokenCount: usage.input_tokens,
      outputTokenCount: usage.output_tokens,
      invocationLatency: 120,
      firstByteLatency: 40,
      cacheReadInputTokenCount: usage.cache_read_input_tokens ?? 0,
      cacheWriteInputTokenCount: usage.cache_creation_input_tokens ?? 0,
    },
  };
}

const BEDROCK_PATH =
  /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/;

/**
 * A local Amazon Bedrock runtime: InvokeModel with Claude's body (`/model/{id}/invoke`,
 * `/invoke-with-response-stream`), Converse (`/converse`, `/converse-stream`), CountTokens, and the
 * control plane's listings the verifier reads (`GET /foundation-models`, `/inference-profiles`).
 * As Bedrock does, it takes a Bedrock API key (`Authorization: Bearer`) it knows or a SigV4
 * signature (service `bedrock`, region `region`) by access keys it knows, checked by signing the
 * request again with AWS's signer; anything else is a 403 `UnrecognizedClientException`. Claude's
 * invoke body must carry `anthropic_version: "bedrock-2023-05-31"` and no `model`. Streams are
 * AWS event streams. Every request is recorded in `seen`, refused ones too.
 */
export class FakeBedrock extends FakeUpstream {
  claudeUsage: BedrockUsage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };
  /** Requests refused for their credential. */
  refused = 0;
  /** Streams break off (their connection cut) after this many messages; undefined: they end. */
  breakStreamAfter: number | undefined;
  /** Requests refused for their body (400), and why. */
  invalid: string[] = [];
  readonly region = "us-east-1";

  constructor(
    private readonly apiKeys: readonly string[],
    private readonly accessKeys: readonly AwsAccessKey[],
  ) {
    super();
    this.reply = "Hello from Claude on Bedrock";
  }

  protected override async respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    const request = this.last as SeenRequest;
    if (!(await this.authenticated(request))) {
      this.refused++;
      return bedrockError(
        res,
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
      );
    }
    if (request.method === "GET" && path === "/foundation-models") {
      return sendBedrockJson(res, 200, {
        modelSummaries: [
          {
            modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0",
            modelName: "Claude Sonnet 4.5",
            providerName: "Anthropic",
          },
          {
            modelId: "anthropic.claude-haiku-4-5-20251001-v1:0",
            modelName: "Claude Haiku 4.5",
            providerName: "Anthropic",
          },
        ],
      });
    }
    if (request.method === "GET" && path === "/inference-profiles") {
      return sendBedrockJson(res, 200, {
        inferenceProfileSummaries: [
          {
            inferenceProfileId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            inferenceProfileName: "US Claude Sonnet 4.5",
            status: "ACTIVE",
            type: "SYSTEM_DEFINED",
          },
        ],
      });
    }
    const match = BEDROCK_PATH.exec(path);
    if (request.method !== "POST" || !match) {
      return bedrockError(
        res,
        404,
        "UnknownOperationException",
        `${request.method} ${path} is not an operation`,
      );
    }
    const [, model = "", method = ""] = match;
    const modelId = decodeURIComponent(model);
    if (method === "count-tokens") return sendBedrockJson(res, 200, { inputTokens: this.claudeUsage.input });
    if (method === "converse" || method === "converse-stream") {
      if (!Array.isArray(body.messages)) return this.invalidBody(res, "messages: Field required");
      return method === "converse"
        ? sendBedrockJson(res, 200, this.converseAnswer())
        : this.converseStream(res);
    }
    const problem = claudeBodyProblem(body);
    if (problem) return this.invalidBody(res, problem);
    const answer: AnthropicAnswer = {
      model: modelId.replace(/^(?:[a-z]+\.)?anthropic\./, "").replace(/-v\d+:\d+$/, ""),
      id: "msg_bdrk_01",
      usage: {
        ...this.claudeAnswerUsage(),
        output_tokens: Math.min(this.claudeUsage.output, Number(body.max_tokens)),
      },
      texts: wordPieces(this.reply),
    };
    if (method === "invoke") {
      // Bedrock's counts of the answer, which the gateway reads first.
      const { usage } = answer;
      res.setHeader("x-amzn-bedrock-input-token-count", String(usage.input_tokens));
      res.setHeader("x-amzn-bedrock-output-token-count", String(usage.output_tokens));
      res.setHeader(
        "x-amzn-bedrock-cache-read-input-token-count",
        String(usage.cache_read_input_tokens ?? 0),
      );
      res.setHeader(
        "x-amzn-bedrock-cache-write-input-token-count",
        String(usage.cache_creation_input_tokens ?? 0),
      );
      return sendBedrockJson(res, 200, anthropicMessage(answer));
    }
    return this.writeStream(
      res,
      anthropicStreamEvents(answer).map(({ data }) =>
        eventStreamMessage("chunk", {
          bytes: Buffer.from(JSON.stringify(withMetrics(data, answer.usage))).toString("base64"),
          p: "abcdefgh",
        }),
      ),
    );
  }

  private invalidBody(res: ServerResponse, problem: string) {
    this.invalid.push(problem);
    return bedrockError(res, 400, "ValidationException", problem);
  }

  private claudeAnswerUsage(): AnthropicUsage {
    const u = this.claudeUsage;
    return {
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_input_tokens: u.cacheRead,
      cache_creation_input_tokens: u.cacheWrite,
    };
  }

  private converseUsage() {
    const u = this.claudeUsage;
    return {
      inputTokens: u.input,
      outputTokens: u.output,
      totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
      cacheReadInputTokens: u.cacheRead,
      cacheWriteInputTokens: u.cacheWrite,
    };
  }

  private converseAnswer() {
    return {
      output: { message: { role: "assistant", content: [{ text: this.reply }] } },
      stopReason: "end_turn",
      usage: this.converseUsage(),
      metrics: { latencyMs: 120 },
    };
  }

  private converseStream(res: ServerResponse) {
    return this.writeStream(res, [
      eventStreamMessage("messageStart", { role: "assistant" }),
      ...wordPieces(this.reply).map((text) =>
        eventStreamMessage("contentBlockDelta", { contentBlockIndex: 0, delta: { text } }),
      ),
      eventStreamMessage("contentBlockStop", { contentBlockIndex: 0 }),
      eventStreamMessage("messageStop", { stopReason: "end_turn" }),
      eventStreamMessage("metadata", { usage: this.converseUsage(), metrics: { latencyMs: 120 } }),
    ]);
  }

  /** An event stream, written as fast as the reader takes it; stops when the reader leaves. */
  private async writeStream(res: ServerResponse, messages: Uint8Array[]) {
    res.writeHead(200, {
      "content-type": "application/vnd.amazon.eventstream",
      "x-amzn-requestid": "req-bdrk",
    });
    for (const [index, message] of messages.entries()) {
      if (res.destroyed) return;
      if (index === this.breakStreamAfter) {
        res.destroy();
        return;
      }
      // Before a break, each message is flushed: the reader gets them before the connection ends.
      if (this.breakStreamAfter !== undefined)
        await new Promise<void>((resolve) => res.write(message, () => resolve()));
      else if (!res.write(message)) await drained(res);
    }
    res.end();
  }

  /** A Bedrock API key it knows, or a SigV4 signature by access keys it knows that signing again reproduces. */
  private async authenticated(request: SeenRequest): Promise<boolean> {
    const bearer = bearerToken(request);
    if (bearer !== undefined) return this.apiKeys.includes(bearer);
    return (await this.signer(request)) !== undefined;
  }

  /** The access key whose signature the request carries, if signing it again gives the same. */
  async signer(request: SeenRequest): Promise<AwsAccessKey | undefined> {
    const authorization = String(request.headers.authorization ?? "");
    const parts =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(
        authorization,
      );
    if (!parts) return undefined;
    const [, keyId, , region, service, signedHeaders = "", signature] = parts;
    const key = this.accessKeys.find((known) => known.access_key_id === keyId);
    const date = String(request.headers["x-amz-date"] ?? "");
    if (!key || region !== this.region || service !== "bedrock" || date === "") return undefined;
    const headers: Record<string, string> = {};
    for (const name of signedHeaders.split(";")) headers[name] = String(request.headers[name] ?? "");
    const signer = new SignatureV4({
      service: "bedrock",
      region: this.region,
      sha256: Sha256,
      credentials: {
        accessKeyId: key.access_key_id,
        secretAccessKey: key.secret_access_key,
        ...(key.session_token ? { sessionToken: key.session_token } : {}),
      },
    });
    const host = headers.host ?? "";
    const signed = await signer.sign(
      {
        method: request.method,
        protocol: "http:",
        hostname: host.split(":")[0] ?? "",
        path: request.path,
        query: Object.fromEntries(new URLSearchParams(request.query)),
        headers,
        body: request.text,
      },
      { signingDate: amzDate(date), signableHeaders: new Set(Object.keys(headers)) },
    );
    const again = String(signed.headers.authorization ?? "").split("Signature=")[1];
    return again === signature ? key : undefined;
  }
}

/** `20261129T193000Z` as a Date. */
const amzDate = (text: string) =>
  new Date(
    `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}T${text.slice(9, 11)}:${text.slice(11, 13)}:${text.slice(13, 15)}Z`,
  );

function claudeBodyProblem(body: Record<string, unknown>): string | undefined {
  if ("model" in body) return "extraneous key [model] is not permitted";
  if (body.anthropic_version !== BEDROCK_ANTHROPIC_VERSION) {
    return `anthropic_version: expected ${BEDROCK_ANTHROPIC_VERSION}`;
  }
  if (!Array.isArray(body.messages)) return "messages: Field required";
  return undefined;
}

function sendBedrockJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "x-amzn-requestid": "req-bdrk" });
  res.end(JSON.stringify(body));
}

/** Bedrock's error: `{"message"}`, its type in `x-amzn-ErrorType`. */
function bedrockError(res: ServerResponse, status: number, type: string, message: string) {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  res.end(JSON.stringify({ message }));
}
