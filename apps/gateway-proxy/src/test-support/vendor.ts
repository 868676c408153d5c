import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { TEST_SERVER_CERT_PEM, TEST_SERVER_KEY_PEM } from "@agentnet/testkit";
import {
  type AnthropicAnswer,
  anthropicMessage,
  anthropicStreamEvents,
  sseEvent,
} from "@agentnet/testkit/anthropic-messages";
import {
  chatCompletion,
  chatCompletionChunks,
  DONE_EVENT,
  dataEvent,
  type OpenAiAnswer,
} from "@agentnet/testkit/openai-answers";

/** What the vendor does with one request. */
export type VendorMove =
  | { kind: "answer" }
  | { kind: "status"; status: number; body: unknown; headers?: Record<string, string> }
  /** Sends its headers this late (a slow first byte), then answers. */
  | { kind: "slow"; ms: number }
  /** A stream whose connection drops after its headers, before any event. */
  | { kind: "dropBeforeFirstByte" }
  /** A stream whose connection drops after its first event. */
  | { kind: "dropAfterFirstByte" }
  /** A stream that sends its first event and the rest only once `release()` is called. */
  | { kind: "hold" };

export const ANSWER_USAGE = { input: 11, output: 7 };

/**
 * A local vendor speaking OpenAI chat completions and Anthropic messages, streamed or not, that
 * fails on command: `script` lists the moves of the next requests, `always` the move after them.
 */
export class ScriptedVendor {
  script: VendorMove[] = [];
  always: VendorMove = { kind: "answer" };
  /** Bodies of the requests it received, in order. */
  seen: Record<string, unknown>[] = [];
  /** The HTTP version of each request it received, in order ("1.1", "2.0"). */
  httpVersions: string[] = [];
  /** Connections clients opened to it. */
  connections = 0;
  /** Requests whose client (the proxy) closed them before their answer ended. */
  closedEarly = 0;
  /** Streamed answers between their headers and their end, now and at most. */
  open = 0;
  mostOpen = 0;
  private held: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | Http2SecureServer | undefined;

  constructor(readonly reply = "hello") {}

  /** Listens on loopback: plain HTTP/1.1, or with `tls` HTTPS offering HTTP/2 and HTTP/1.1 (ALPN). */
  async start({ tls = false }: { tls?: boolean } = {}): Promise<string> {
    const handle = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    const server = tls
      ? // The compatibility API of node:http2 answers as node:http does.
        createSecureServer(
          { key: TEST_SERVER_KEY_PEM, cert: TEST_SERVER_CERT_PEM, allowHTTP1: true },
          handle as unknown as Parameters<typeof createSecureServer>[1],
        )
      : createServer(handle);
    server.on("connection", (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `${tls ? "https" : "http"}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Lets every held stream end. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const resume of held) resume();
  }

  async stop(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    this.seen.push(body);
    this.httpVersions.push(req.httpVersion);
    const move = this.script.shift() ?? this.always;
    res.once("close", () => {
      if (!res.writableFinished) this.closedEarly++;
    });
    const anthropic = (req.url ?? "").includes("/messages");
    if (move.kind === "status") {
      res.writeHead(move.status, { "content-type": "application/json", ...move.headers });
      res.end(JSON.stringify(move.body));
      return;
    }
    if (move.kind === "slow") await new Promise((resolve) => setTimeout(resolve, move.ms));
    if (res.destroyed) return;
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(anthropic ? this.message(body) : this.completion(body)));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    if (move.kind === "dropBeforeFirstByte") {
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    const events = anthropic ? this.messageEvents(body) : this.completionEvents(body);
    this.open++;
    this.mostOpen = Math.max(this.mostOpen, this.open);
    try {
      for (const [index, event] of events.entries()) {
        res.write(event);
        if (index === 0 && move.kind === "dropAfterFirstByte") {
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        }
        if (index === 0 && move.kind === "hold") await new Promise<void>((resume) => this.held.push(resume));
      }
      res.end();
    } finally {
      this.open--;
    }
  }

  /** The reply as an OpenAI-format answer of the fixed usage. */
  private openaiAnswer(body: Record<string, unknown>): OpenAiAnswer {
    return {
      model: body.model,
      usage: { input: ANSWER_USAGE.input, output: ANSWER_USAGE.output },
      texts: [this.reply],
    };
  }

  private completion(body: Record<string, unknown>) {
    return chatCompletion(this.openaiAnswer(body));
  }

  private completionEvents(body: Record<string, unknown>): string[] {
    return [...chatCompletionChunks(this.openaiAnswer(body), true).map(dataEvent), DONE_EVENT];
  }

  /** The reply as an Anthropic answer of the fixed usage. */
  private answer(body: Record<string, unknown>): AnthropicAnswer {
    const usage = { input_tokens: ANSWER_USAGE.input, output_tokens: ANSWER_USAGE.output };
    return { model: body.model, usage, texts: [this.reply] };
  }

  private message(body: Record<string, unknown>) {
    return anthropicMessage(this.answer(body));
  }

  private messageEvents(body: Record<string, unknown>): string[] {
    return anthropicStreamEvents(this.answer(body)).map(sseEvent);
  }
}
