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
function heartbeat(
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

/**
 * The heartbeat in messages of at most `maxBytes` each: one, unless the endpoints served lately
 * would not fit; then each message names some of them. Every receiver takes their union (the
 * control-plane records each endpoint, consumption only hears the proxy).
 */
export function heartbeatMessages(
  proxyId: string,
  fixed: readonly string[],
  served: ServedEndpoints,
  now: number,
  maxBytes: number,
): string[] {
  const whole = heartbeat(proxyId, fixed, served, now);
  const emptyBytes = Buffer.byteLength(JSON.stringify({ ...whole, endpoints: [] }));
  const messages: string[] = [];
  let endpoints: string[] = [];
  let bytes = emptyBytes;
  for (const endpoint of whole.endpoints) {
    // With the comma that separates it from the previous one.
    const more = Buffer.byteLength(JSON.stringify(endpoint)) + 1;
    if (endpoints.length > 0 && bytes + more > maxBytes) {
      messages.push(JSON.stringify({ ...whole, endpoints }));
      endpoints = [];
      bytes = emptyBytes;
    }
    endpoints.push(endpoint);
    bytes += more;
  }
  messages.push(JSON.stringify({ ...whole, endpoints }));
  return messages;
}
