import type { HeartbeatCooldown, ProviderCooldown } from "@agentnet/contracts";
import { ACTIVE_PROXY_WINDOW_MS } from "./settings";

interface ProxyReport {
  /** When the proxy last said what it has cooling down. */
  at: number;
  cooling: readonly HeartbeatCooldown[];
}

/**
 * Providers gateway proxies try last because they kept failing, as the proxies' heartbeats say.
 * A heartbeat names everything its proxy has cooling, so each report replaces that proxy's last
 * one. A proxy counts like the endpoints it serves (`ActiveEndpoints`): for ACTIVE_PROXY_WINDOW_MS
 * after its last report, so one that stops heartbeating stops counting. A cooldown shows until its
 * time passes; when several proxies cool the same provider, the latest `cooling_until` wins, with
 * the last error that proxy saw.
 */
export class ProxyCooldowns {
  private readonly byProxy = new Map<string, ProxyReport>();

  record(proxyId: string, cooling: readonly HeartbeatCooldown[], at: number): void {
    this.forgetSilent(at);
    if (cooling.length === 0) this.byProxy.delete(proxyId);
    else this.byProxy.set(proxyId, { at, cooling });
  }

  /** The provider's cooldown over every proxy still heartbeating; undefined when none cools it. */
  of(accountId: string, providerId: string, now: number): ProviderCooldown | undefined {
    let latest: HeartbeatCooldown | undefined;
    let latestUntil = now;
    for (const report of this.byProxy.values()) {
      if (now - report.at > ACTIVE_PROXY_WINDOW_MS) continue;
      for (const entry of report.cooling) {
        if (entry.provider_id !== providerId || entry.account_id !== accountId) continue;
        const until = Date.parse(entry.cooling_until);
        if (until > latestUntil) {
          latest = entry;
          latestUntil = until;
        }
      }
    }
    return latest ? { until: latest.cooling_until, last_error: latest.last_error } : undefined;
  }

  /** Proxies gone silent are dropped, so a fleet that churns does not pile up here. */
  private forgetSilent(now: number): void {
    for (const [proxyId, report] of this.byProxy) {
      if (now - report.at > ACTIVE_PROXY_WINDOW_MS) this.byProxy.delete(proxyId);
    }
  }
}
