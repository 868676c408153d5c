import { CallersRevokedEvent, Events } from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";
import { jsonOrUndefined } from "./json";

/**
 * Publishes a revocation and resolves once the NATS server has taken it (a flush's PING is
 * answered only after everything sent before it was handled): by then every subscribed proxy and
 * api-gateway has its copy queued ahead of the reply the caller sends next on this connection.
 * Rejects when the connection is lost meanwhile (the reply could not leave either).
 */
export async function announceCallerRevocation(
  nc: NatsConnection,
  event: CallersRevokedEvent,
): Promise<void> {
  nc.publish(Events.callersRevoked, JSON.stringify(event));
  await nc.flush();
}

/** A cache of token → caller that a revocation reaches. */
export interface RevocableCallers {
  /** Drops the callers the event names, and keeps lookups already under way from caching theirs. */
  revoke(event: CallersRevokedEvent): void;
  /** Revocations may have been missed (the connection was lost): nothing cached is trusted any more. */
  distrustAll(): void;
}

/**
 * Follows `agn.callers.revoked` into `callers`, and distrusts all of them whenever the connection
 * comes back (core NATS does not replay what was published while it was away). Subscribe before
 * serving: the subscription reaches the server ahead of the first token lookup on the connection.
 */
export function followCallerRevocations(
  nc: NatsConnection,
  callers: RevocableCallers,
  onMalformed: (issues: unknown) => void,
): { stop(): void } {
  const subscription = nc.subscribe(Events.callersRevoked, {
    callback: (error, msg) => {
      if (error) return;
      const parsed = CallersRevokedEvent.safeParse(jsonOrUndefined(msg.string()));
      if (parsed.success) {
        callers.revoke(parsed.data);
        return;
      }
      // Something was revoked and this reader cannot tell what: nothing cached is trusted.
      callers.distrustAll();
      onMalformed(parsed.error.issues);
    },
  });
  let stopped = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (stopped) break;
      if (status.type === "reconnect") callers.distrustAll();
    }
  })().catch(() => undefined);
  return {
    stop() {
      stopped = true;
      subscription.unsubscribe();
    },
  };
}
