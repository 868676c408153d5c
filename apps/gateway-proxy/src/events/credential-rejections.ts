import type { NatsConnection } from "@agentnet/bus";
import { AlertSubjects, type CredentialRejectedNotice } from "@agentnet/contracts";

/** One notice per provider at most this often: a revoked key fails every request until an admin acts. */
const NOTICE_INTERVAL_MS = 60_000;
/** Providers remembered at most; past it the memory starts over (a few notices more, never fewer). */
const MAX_REMEMBERED = 10_000;

/**
 * Tells the control-plane that a vendor answered a proxied request 401: the provider's key was
 * revoked or rotated at the vendor, and every member's request through it now fails. Core NATS,
 * no ack, at most one notice a minute per provider from this proxy; the control-plane makes one
 * `provider.credential_failed` alert per provider and hour of them. Only a 401 gets here, so the
 * path of every other answer is one comparison longer.
 */
export class CredentialRejections {
  private readonly lastNotice = new Map<string, number>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly clock: () => number = Date.now,
  ) {}

  rejected(accountId: string, providerId: string, upstreamStatus: number): void {
    const now = this.clock();
    const key = `${accountId}|${providerId}`;
    const last = this.lastNotice.get(key);
    if (last !== undefined && now - last < NOTICE_INTERVAL_MS) return;
    if (this.lastNotice.size >= MAX_REMEMBERED) this.lastNotice.clear();
    this.lastNotice.set(key, now);
    const notice: CredentialRejectedNotice = {
      v: 1,
      account_id: accountId,
      provider_id: providerId,
      upstream_status: upstreamStatus,
      at: new Date(now).toISOString(),
    };
    try {
      this.nc.publish(AlertSubjects.credentialRejected, JSON.stringify(notice));
    } catch {
      // A closing connection: the next 401 after the restart says it again.
      this.lastNotice.delete(key);
    }
  }
}
