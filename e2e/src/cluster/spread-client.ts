/** One request as the clients saw it (status 0: no answer from any proxy tried). */
export interface Sent {
  /** When it was first sent and when its last attempt ended (ms since the epoch). */
  at: number;
  done: number;
  status: number;
  reason: string;
  /** The answer's Retry-After (seconds), if it had one. */
  retryAfter?: number;
  /** The proxies it was sent to, in order (a second one when the first gave no answer). */
  proxies: number[];
}

/** Errors where the proxy gave no answer at all: a load balancer sends such a request elsewhere. */
const NO_ANSWER = /ECONNREFUSED|ECONNRESET|socket hang up|other side closed|EPIPE|UND_ERR_SOCKET/i;

/**
 * A client in front of several proxies, as a load balancer with retries is: requests go round the
 * proxies in turn, and one that got no answer (connection refused or reset) is sent once more, to
 * the next proxy. A timeout is not retried (the request may be running upstream).
 */
export class SpreadClient {
  private next = 0;

  constructor(
    private readonly proxyUrls: () => string[],
    private readonly token: string,
    private readonly body: Record<string, unknown>,
    /** A load balancer's request timeout: past it the client is answered 504 by the balancer. */
    private readonly timeoutMs = 15_000,
  ) {}

  async send(): Promise<Sent> {
    const urls = this.proxyUrls();
    const first = this.next++ % urls.length;
    const sent: Sent = { at: Date.now(), done: 0, status: 0, reason: "", proxies: [] };
    for (const proxy of [first, (first + 1) % urls.length]) {
      sent.proxies.push(proxy);
      await this.attempt(urls[proxy] as string, sent);
      if (sent.status !== 0 || !NO_ANSWER.test(sent.reason)) break;
    }
    sent.done = Date.now();
    return sent;
  }

  private async attempt(proxyUrl: string, sent: Sent): Promise<void> {
    try {
      const response = await fetch(`${proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
        body: JSON.stringify(this.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await response.text();
      sent.status = response.status;
      const retryAfter = response.headers.get("retry-after");
      if (retryAfter !== null) sent.retryAfter = Number(retryAfter);
      sent.reason =
        response.status === 200 ? "" : (response.headers.get("x-agentnet-reason") ?? text.slice(0, 80));
    } catch (error) {
      sent.status = 0;
      sent.reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? `${(error.cause as { code?: string }).code ?? ""} ${error.cause.message}`.trim()
            : error.name
          : "error";
    }
  }
}

/** What was sent from `from` to `to` and how much of it `answered` accepts. */
export function shareOf(sent: Sent[], from: number, to: number, answered: (entry: Sent) => boolean) {
  const inWindow = sent.filter((entry) => entry.at >= from && entry.at < to);
  const ok = inWindow.filter(answered).length;
  const failures = new Map<string, number>();
  for (const entry of inWindow) {
    if (answered(entry)) continue;
    const key = entry.status === 0 ? `no answer (${entry.reason})` : `${entry.status} ${entry.reason}`;
    failures.set(key, (failures.get(key) ?? 0) + 1);
  }
  return {
    sent: inWindow.length,
    answered: ok,
    share: inWindow.length === 0 ? 1 : ok / inWindow.length,
    failures: [...failures].map(([what, count]) => `${count} × ${what}`).join("; ") || "—",
  };
}

/** Steady traffic: `perSecond` requests, each on its own (a slow one does not hold the next back). */
export class OpenLoop {
  readonly sent: Sent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly client: SpreadClient,
    private readonly perSecond: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      const request = this.client.send().then((sent) => {
        this.sent.push(sent);
      });
      this.inFlight.add(request);
      void request.finally(() => this.inFlight.delete(request));
    }, 1_000 / this.perSecond);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }
}

/**
 * `callers` callers at once, each sending its next request `thinkMs` after its last answer, as
 * agents do: the concurrency a cap is measured under.
 */
export class ClosedLoop {
  readonly sent: Sent[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly client: SpreadClient,
    private readonly callers: number,
    private readonly thinkMs: number,
  ) {}

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.callers }, async (_, caller) => {
      // Spread over the first think time, so callers do not move in step.
      await sleep((caller * this.thinkMs) / this.callers);
      while (this.running) {
        this.sent.push(await this.client.send());
        await sleep(this.thinkMs);
      }
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
