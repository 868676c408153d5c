import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import {
  Http2ServerRequest,
  Http2ServerResponse,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import type { ReadableOptions } from "node:stream";

/*
 * node's HTTP/2 compatibility API (`Http2ServerRequest`, `Http2ServerResponse`) made to behave as
 * HTTP/1.1's `IncomingMessage` and `ServerResponse` where a handler written for those would notice,
 * and the types a handler of both takes (`createDualHttpServer`).
 */

/** What a handler reads of a request, over HTTP/1.1 and HTTP/2 alike. */
export type HttpRequest = IncomingMessage | Http2ServerRequest;

/**
 * What a handler does with an answer, over HTTP/1.1 (`ServerResponse`) and HTTP/2 (the
 * compatibility API's response, completed: node's lacks `destroyed` and `writableNeedDrain`, and
 * says `writableFinished` for an answer its client reset; its types claim all three).
 * HTTP/2 forbids connection-specific headers (`connection`, `keep-alive`, `transfer-encoding`,
 * `upgrade`, `proxy-connection`): `writeHead` with one throws there.
 */
export interface HttpAnswer {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly writableNeedDrain: boolean;
  /** True once the answer is done with: ended and closed, destroyed, or its client gone. */
  readonly destroyed: boolean;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders): unknown;
  flushHeaders(): void;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string | Uint8Array): unknown;
  destroy(error?: Error): unknown;
  on(event: "close" | "drain" | "finish", listener: () => void): unknown;
  once(event: "close" | "drain" | "finish", listener: () => void): unknown;
  off(event: "close" | "drain" | "finish", listener: () => void): unknown;
}

export type HttpHandler = (req: HttpRequest, res: HttpAnswer) => void;

/** The error a handler reading the body sees when its client left: HTTP/1.1's own. */
function clientLeft(): Error {
  return Object.assign(new Error("aborted"), { code: "ECONNRESET" });
}

/**
 * An HTTP/2 request as an HTTP/1.1 handler expects it: a `host` header (from `:authority`, as RFC
 * 9113 §8.3.1 has an intermediary convert it), and a body that fails when the client resets the
 * stream before it ended, instead of ending early as if whole.
 */
export class Http2Request extends Http2ServerRequest {
  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    options: ReadableOptions,
    raw: string[],
  ) {
    super(stream, headers, options, raw);
    const authority = headers[":authority"];
    if (headers.host === undefined && authority !== undefined) headers.host = authority;
    this.once("aborted", abortBody);
  }
}

/** Ends the request's body with HTTP/1.1's `aborted` error, for whoever reads it (else quietly). */
export function abortBody(this: Http2Request): void {
  if (this.readableEnded || this.destroyed) return;
  this.destroy(this.listenerCount("error") > 0 ? clientLeft() : undefined);
}

/**
 * The compatibility API's response as node's `ServerResponse` behaves: `destroyed` (set once the
 * stream closed, as HTTP/1.1's once its connection let go of it), `writableNeedDrain`, and
 * `writableFinished` true only once `end()` was called and all of it flushed (node's says true for
 * a stream the client reset mid-answer, its writable side ended by the reset: a handler would take
 * the client leaving for a finished answer).
 */
export class Http2Answer extends Http2ServerResponse<Http2Request> {
  /** node's has it; its types do not say so. */
  declare flushHeaders: () => void;

  /**
   * Headers as HTTP/1.1 writes them, but a header HTTP/2 allows once (`content-type`, …) given
   * several values has its first: node's throws there, and a relayed upstream may send one twice.
   */
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders): this;
  override writeHead(statusCode: number, statusMessage: string, headers?: OutgoingHttpHeaders): this;
  override writeHead(
    statusCode: number,
    messageOrHeaders?: string | OutgoingHttpHeaders,
    headers?: OutgoingHttpHeaders,
  ): this {
    const given = typeof messageOrHeaders === "string" ? headers : messageOrHeaders;
    return super.writeHead(statusCode, given && singleValued(given));
  }
}

/** The headers HTTP/2 allows one value of (node's list, which its `writeHead` enforces). */
const SINGLE_VALUE_HEADERS = new Set([
  "access-control-allow-credentials",
  "access-control-max-age",
  "access-control-request-method",
  "age",
  "authorization",
  "content-encoding",
  "content-language",
  "content-length",
  "content-location",
  "content-md5",
  "content-range",
  "content-type",
  "date",
  "dnt",
  "etag",
  "expires",
  "from",
  "host",
  "if-match",
  "if-modified-since",
  "if-none-match",
  "if-range",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "range",
  "referer",
  "retry-after",
  "tk",
  "upgrade-insecure-requests",
  "user-agent",
  "x-content-type-options",
]);

function singleValued(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let copy: OutgoingHttpHeaders | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (!Array.isArray(value) || !SINGLE_VALUE_HEADERS.has(name.toLowerCase())) continue;
    copy ??= { ...headers };
    copy[name] = value[0];
  }
  return copy ?? headers;
}
Object.defineProperties(Http2Answer.prototype, {
  destroyed: {
    get(this: Http2Answer) {
      return this.stream.destroyed;
    },
  },
  writableNeedDrain: {
    get(this: Http2Answer) {
      return this.stream.writableNeedDrain;
    },
  },
  writableFinished: {
    get(this: Http2Answer) {
      return this.writableEnded && this.stream.writableFinished;
    },
  },
});
