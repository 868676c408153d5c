/** One request the traffic sent: when, and what came back (status 0: no answer at all). */
export interface Sent {
  at: number;
  status: number;
  reason: string;
}

/**
 * Steady traffic through the proxy: `perSecond` small chat completions, each on its own (a slow or
 * failing one does not hold the next back), each with a 5 s deadline, as clients would send them.
 */
export class Traffic {
  readonly sent: Sent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly proxyUrl: string,
    private readonly token: string,
    private readonly perSecond: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.sendOne(), 1_000 / this.perSecond);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }

  /** What was sent from `from` to `to` (ms since the epoch) and how much of it was answered 200. */
  window(from: number, to: number) {
    const sent = this.sent.filter((entry) => entry.at >= from && entry.at < to);
    const answered = sent.filter((entry) => entry.status === 200).length;
    const failures = new Map<string, number>();
    for (const entry of sent) {
      if (entry.status === 200) continue;
      const key = entry.status === 0 ? `no answer (${entry.reason})` : `${entry.status} ${entry.reason}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    }
    return { sent: sent.length, answered, share: sent.length === 0 ? 1 : answered / sent.length, failures };
  }

  get answered(): number {
    return this.sent.filter((entry) => entry.status === 200).length;
  }

  private sendOne(): void {
    const entry: Sent = { at: Date.now(), status: 0, reason: "" };
    this.sent.push(entry);
    const request = (async () => {
      try {
        const response = await fetch(`${this.proxyUrl}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
          body: JSON.stringify({
            model: "gpt-4o-mini",
            messages: [{ role: "user", content: "ping" }],
            max_tokens: 30,
          }),
          signal: AbortSignal.timeout(5_000),
        });
        const text = await response.text();
        entry.status = response.status;
        if (response.status !== 200)
          entry.reason = response.headers.get("x-agentnet-reason") ?? text.slice(0, 80);
      } catch (error) {
        entry.reason =
          error instanceof Error
            ? error.cause instanceof Error
              ? error.cause.message
              : error.name
            : "error";
      }
    })();
    this.inFlight.add(request);
    void request.finally(() => this.inFlight.delete(request));
  }
}
