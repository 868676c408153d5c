import type { ServerResponse } from "node:http";
import { createServer } from "node:net";
import { anthropicMessageStart, sseEvent } from "@agentnet/testkit/anthropic-messages";
import { chatCompletionChunks, dataEvent } from "@agentnet/testkit/openai-answers";
import { FakeUpstream } from "./upstream";

/**
 * How a vendor fails one request.
 * - `status`: an error answer in the wire's own shape (529 is Anthropic's `overloaded_error`),
 *   with `retry-after` (seconds) and `retry-after-ms` when given.
 * - `slow_first_byte`: the answer, but only after `delayMs` of silence.
 * - `reset`: the connection is dropped without an answer.
 * - `cut_before_first_byte`: a 200 event stream whose connection drops before its first event.
 * - `cut_after_first_byte`: a 200 event stream whose connection drops once it has begun (its first
 *   event; a chat completion's role and first text).
 */
export type VendorFault =
  | { kind: "status"; status: number; retryAfterSeconds?: number; retryAfterMs?: number }
  | { kind: "slow_first_byte"; delayMs: number }
  | { kind: "reset" }
  | { kind: "cut_before_first_byte" }
  | { kind: "cut_after_first_byte" };

export const overloaded: VendorFault = { kind: "status", status: 529 };
export const unavailable: VendorFault = { kind: "status", status: 503 };

/**
 * A fake vendor that fails on command, then answers as `FakeUpstream` does: `failNext(n, fault)`
 * fails the next `n` requests, `failAlways(fault)` every request until `recover()`. `seen` counts
 * every request that reached it, failed or not.
 */
export class FailingVendor extends FakeUpstream {
  private queued: VendorFault[] = [];
  private always: VendorFault | undefined;
  /** Requests this vendor failed. */
  failed = 0;

  failNext(count: number, fault: VendorFault): void {
    for (let i = 0; i < count; i++) this.queued.push(fault);
  }

  failAlways(fault: VendorFault): void {
    this.always = fault;
  }

  recover(): void {
    this.always = undefined;
    this.queued = [];
  }

  protected override respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    const fault = this.queued.shift() ?? this.always;
    if (!fault) return super.respond(res, path, body);
    this.failed++;
    switch (fault.kind) {
      case "status":
        return answerError(res, path, fault);
      case "slow_first_byte":
        return new Promise<void>((resolve) =>
          setTimeout(() => {
            if (!res.destroyed) void super.respond(res, path, body);
            resolve();
          }, fault.delayMs),
        );
      case "reset":
        res.socket?.destroy();
        return;
      case "cut_before_first_byte":
        return cutStream(res, undefined);
      case "cut_after_first_byte":
        return cutStream(res, firstEvent(path, body));
    }
  }
}

/** The error body each wire sends for a status, as the vendors send it. */
function answerError(res: ServerResponse, path: string, fault: Extract<VendorFault, { kind: "status" }>) {
  const anthropicType =
    fault.status === 529 ? "overloaded_error" : fault.status === 429 ? "rate_limit_error" : "api_error";
  const body = path.endsWith("/v1/messages")
    ? { type: "error", error: { type: anthropicType, message: `failing on purpose (${fault.status})` } }
    : {
        error: {
          message: `failing on purpose (${fault.status})`,
          type: fault.status === 429 ? "rate_limit_exceeded" : "server_error",
          code: null,
        },
      };
  res.writeHead(fault.status, {
    "content-type": "application/json",
    ...(fault.retryAfterSeconds === undefined ? {} : { "retry-after": String(fault.retryAfterSeconds) }),
    ...(fault.retryAfterMs === undefined ? {} : { "retry-after-ms": String(fault.retryAfterMs) }),
  });
  res.end(JSON.stringify(body));
}

/**
 * The start of a stream of the route, sent in one write: Anthropic's `message_start`, a chat
 * completion's role chunk and its first text.
 */
function firstEvent(path: string, body: Record<string, unknown>): string {
  if (path.endsWith("/v1/messages")) {
    const usage = { input_tokens: 100, output_tokens: 1 };
    return sseEvent(anthropicMessageStart({ model: body.model, id: "msg_cut", usage, texts: [] }));
  }
  const [role, partial] = chatCompletionChunks(
    { model: body.model, id: "chatcmpl-cut", usage: { input: 100, output: 1 }, texts: ["Partial"] },
    false,
  );
  return dataEvent(role) + dataEvent(partial);
}

/** A 200 event stream that sends `first` (if any), then loses its connection. */
async function cutStream(res: ServerResponse, first: string | undefined) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  if (first === undefined) res.flushHeaders();
  else res.write(first);
  // Long enough for the headers and the event to leave as their own packets before the cut.
  await new Promise((resolve) => setTimeout(resolve, 50));
  res.socket?.destroy();
}

/** A loopback URL nothing listens on: connecting to it is refused. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port was assigned");
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${address.port}`;
}
