import type { ProxyHeartbeat } from "@agentnet/contracts";

/** An endpoint counts as served for this long after its last request. */
export const SERVED_WINDOW_MS = 5 * 60 * 1000;

/** Endpoints this proxy served lately, for the heartbeat. */
export class ServedEndpoints {
  private readonly lastSeen = new Map<string, number>();

  record(endpoint: string, now: number): void {
    if (endpoint !== "") this.lastSeen.set(endpoint, now);
  }

  list(now: number): string[] {
    const served: string[] = [];
    for (const [endpoint, at] of this.lastSeen) {
      if (now - at <= SERVED_WINDOW_MS) served.push(endpoint);
      else this.lastSeen.delete(endpoint);
    }
    return served;
  }
}

/** The configured endpoints plus those served in the last five minutes, once each. */
export function heartbeat(
  proxyId: string,
  fixed: readonly string[],
  served: ServedEndpoints,
  now: number,
): ProxyHeartbeat {
  return {
    v: 1,
    proxy_id: proxyId,
    endpoints: [...new Set([...fixed, ...served.list(now)])],
    at: new Date(now).toISOString(),
  };
}
