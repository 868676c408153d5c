import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WebhookEvent } from "@agentnet/contracts";

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived: what the signature covers. */
  rawBody: string;
}

/**
 * A webhook receiver, as an account would run one: a real HTTP server on loopback that records
 * every POST and answers each path the statuses queued for it (`answer`), then 200.
 */
export class WebhookReceiver {
  received: ReceivedWebhook[] = [];
  private readonly answers = new Map<string, number[]>();
  private server: Server | undefined;

  /** The next POSTs to `path` are answered these statuses, in order. */
  answer(path: string, ...statuses: number[]) {
    this.answers.set(path, statuses);
  }

  private port = 0;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const path = req.url ?? "";
        this.received.push({ path, headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(this.answers.get(path)?.shift() ?? 200, { "content-type": "text/plain" });
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://${this.host}`;
  }

  /** `127.0.0.1:<port>`, as AGN_ALLOWED_PRIVATE_WEBHOOKS names it. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The events received on one path (each test has its own), in order. */
  events(path: string): WebhookEvent[] {
    return this.on(path).map((webhook) => JSON.parse(webhook.rawBody) as WebhookEvent);
  }

  on(path: string): ReceivedWebhook[] {
    return this.received.filter((webhook) => webhook.path === path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/**
 * The verification docs/API.md tells receivers to do: read `t` and `v1` from
 * `X-Agentnet-Signature`, refuse a `t` more than 5 minutes from now, compute HMAC-SHA256 keyed with
 * the signing secret over `<t>.<raw body>`, and compare it with `v1` in constant time.
 */
export function verifySignature(secret: string, webhook: ReceivedWebhook, nowSeconds = Date.now() / 1000) {
  const header = String(webhook.headers["x-agentnet-signature"] ?? "");
  const fields = new Map(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const t = fields.get("t") ?? "";
  if (!/^\d+$/.test(t) || Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${webhook.rawBody}`).digest();
  const given = Buffer.from(fields.get("v1") ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
