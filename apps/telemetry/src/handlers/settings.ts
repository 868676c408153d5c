import { request } from "@agentnet/bus";
import { type Caller, ControlPlane, type Settings } from "@agentnet/contracts";
import type { TelemetryContext } from "./context";

/** The caller's account settings (no record reads as the defaults, as GET does), whatever their role. */
const fetchSettings = (ctx: TelemetryContext, caller: Caller): Promise<Settings> =>
  request(
    ctx.nc,
    ControlPlane.settingsOfAccount,
    { account_id: caller.account_id },
    { timeoutMs: ctx.requestTimeoutMs },
  );

/**
 * Settings cached per account for `ttlMs`: a dashboard fires the three reads together and pages
 * quickly, and a switch flipped seconds ago may show a moment late. Concurrent reads share one
 * request; a failed one is not cached.
 */
export function createSettingsReader(ctx: TelemetryContext, ttlMs: number) {
  const cache = new Map<string, { at: number; settings: Promise<Settings> }>();
  return {
    get(caller: Caller): Promise<Settings> {
      const now = Date.now();
      const hit = cache.get(caller.account_id);
      if (hit !== undefined && now - hit.at < ttlMs) return hit.settings;
      const settings = fetchSettings(ctx, caller);
      cache.set(caller.account_id, { at: now, settings });
      settings.catch(() => cache.delete(caller.account_id));
      return settings;
    },
  };
}
export type SettingsReader = ReturnType<typeof createSettingsReader>;
