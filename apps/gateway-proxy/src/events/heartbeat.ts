import {
  type HeartbeatCooldown,
  MAX_COOLDOWN_ERROR_LENGTH,
  MAX_HEARTBEAT_COOLDOWNS,
  type ProxyHeartbeat,
} from "@agentnet/contracts";
import type { CoolingProvider } from "../domain/cooldown";

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

/**
 * The cooldowns a heartbeat names: those still cooling at `now` (one past its time only awaits a
 * probe), the longest first, at most MAX_HEARTBEAT_COOLDOWNS, each error cut to its bound.
 */
export function heartbeatCooldowns(cooling: readonly CoolingProvider[], now: number): HeartbeatCooldown[] {
  return cooling
    .map((entry) => ({ entry, until: Date.parse(entry.cooling_until) }))
    .filter(({ until }) => until > now)
    .sort((a, b) => b.until - a.until)
    .slice(0, MAX_HEARTBEAT_COOLDOWNS)
    .map(({ entry }) => ({
      account_id: entry.account_id,
      provider_id: entry.provider_id,
      cooling_until: entry.cooling_until,
      last_error: entry.last_error.slice(0, MAX_COOLDOWN_ERROR_LENGTH),
    }));
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

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * The heartbeat in messages of at most `maxBytes` each: one, unless the endpoints served lately
 * would not fit; then each message names some of them. Every receiver takes their union (the
 * control-plane records each endpoint, consumption only hears the proxy). The first message alone
 * names the providers cooling down (`heartbeatCooldowns`, [] when none), counted in its size; were
 * they too many for `maxBytes`, the shortest cooldowns are left out.
 */
export function heartbeatMessages(
  proxyId: string,
  fixed: readonly string[],
  served: ServedEndpoints,
  now: number,
  maxBytes: number,
  cooling: readonly CoolingProvider[] = [],
): string[] {
  const whole = heartbeat(proxyId, fixed, served, now);
  const coolingProviders = heartbeatCooldowns(cooling, now);
  const first = () => ({ ...whole, endpoints: [] as string[], cooling_providers: coolingProviders });
  while (coolingProviders.length > 0 && bytesOf(first()) > maxBytes) coolingProviders.pop();
  const firstBytes = bytesOf(first());
  const emptyBytes = bytesOf({ ...whole, endpoints: [] });
  const messages: string[] = [];
  const publish = (endpoints: string[]) =>
    messages.push(
      JSON.stringify(messages.length === 0 ? { ...first(), endpoints } : { ...whole, endpoints }),
    );
  let endpoints: string[] = [];
  let bytes = firstBytes;
  for (const endpoint of whole.endpoints) {
    // With the comma that separates it from the previous one.
    const more = Buffer.byteLength(JSON.stringify(endpoint)) + 1;
    if (endpoints.length > 0 && bytes + more > maxBytes) {
      publish(endpoints);
      endpoints = [];
      bytes = emptyBytes;
    }
    endpoints.push(endpoint);
    bytes += more;
  }
  publish(endpoints);
  return messages;
}
