/**
 * Memory, per proxy process, of providers that keep failing. `failures` failures within `windowMs`
 * (or one 429 whose retry-after is at least `cooldownMs`) cool a provider down: requests try it
 * last for `cooldownMs` (or the retry-after). Once that is over, one request probes it: its success
 * ends the cooldown, its failure starts another; a probe that never reports frees the next after
 * another `cooldownMs`.
 */
export interface CooldownOptions {
  failures: number;
  windowMs: number;
  cooldownMs: number;
}

interface ProviderHealth {
  name: string;
  /** The provider's account: the control-plane shows the cooldown on that account's provider. */
  accountId: string;
  /** When the recent failures happened, oldest first (within the window). */
  failedAt: number[];
  coolingUntil: number;
  /** When the probe after a cooldown began; 0 when none is out. */
  probeAt: number;
  lastError: string;
}

/** A provider cooling down, as `GET /status` shows it. */
export interface CoolingProvider {
  account_id: string;
  provider_id: string;
  provider: string;
  cooling_until: string;
  last_error: string;
}

export class Cooldowns {
  private readonly health = new Map<string, ProviderHealth>();

  constructor(
    private readonly options: CooldownOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Tried last: cooling down, or past it with its probe out. */
  cooling(providerId: string): boolean {
    // Healthy providers have no entry: the usual answer is one lookup in an empty map.
    const health = this.health.get(providerId);
    if (!health || health.coolingUntil === 0) return false;
    const now = this.now();
    if (now < health.coolingUntil) return true;
    return health.probeAt !== 0 && now < health.probeAt + this.options.cooldownMs;
  }

  /** An attempt starts at the provider: past its cooldown, it is the probe. */
  attempting(providerId: string): void {
    const health = this.health.get(providerId);
    if (health && health.coolingUntil !== 0 && this.now() >= health.coolingUntil) health.probeAt = this.now();
  }

  succeeded(providerId: string): void {
    if (this.health.size > 0) this.health.delete(providerId);
  }

  /** A failure that would be retried (never a client error): counts toward a cooldown. */
  failed(
    accountId: string,
    providerId: string,
    providerName: string,
    error: string,
    retryAfterMs: number,
  ): void {
    const now = this.now();
    let health = this.health.get(providerId);
    if (!health) {
      health = { name: providerName, accountId, failedAt: [], coolingUntil: 0, probeAt: 0, lastError: "" };
      this.health.set(providerId, health);
    }
    health.lastError = error;
    const { failures, windowMs, cooldownMs } = this.options;
    if (health.probeAt !== 0 || retryAfterMs >= cooldownMs) {
      this.coolDown(health, now + Math.max(cooldownMs, retryAfterMs));
      return;
    }
    const recent = health.failedAt.filter((at) => at > now - windowMs);
    recent.push(now);
    health.failedAt = recent;
    if (recent.length >= failures) this.coolDown(health, now + cooldownMs);
  }

  /** Providers cooling down or awaiting their probe. */
  list(): CoolingProvider[] {
    const listed: CoolingProvider[] = [];
    for (const [id, health] of this.health) {
      if (health.coolingUntil === 0) continue;
      listed.push({
        account_id: health.accountId,
        provider_id: id,
        provider: health.name,
        cooling_until: new Date(health.coolingUntil).toISOString(),
        last_error: health.lastError,
      });
    }
    return listed;
  }

  private coolDown(health: ProviderHealth, until: number): void {
    health.coolingUntil = until;
    health.probeAt = 0;
    health.failedAt = [];
  }
}
