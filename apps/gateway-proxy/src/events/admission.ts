import { Events, PROXY_LOST_REASON, PROXY_LOST_STATUS } from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import type { ProxyContext } from "../context";
import type { AdmittedTokens, Pricing } from "../domain/estimate";
import { zeroUsage } from "../upstream/usage";
import { buildEvent, type RequestRecord } from "./build";

/**
 * Tells the consumption leader, before the request is forwarded, what it stands for should this
 * proxy die before the answer ends: the request's event as the leader would publish it then, its
 * row marked PROXY_LOST_REASON and charged what it was admitted with (the prompt estimate and its
 * first output hold). Core NATS, no ack: it costs the request no round trip, and the proxy's own
 * event, published on the same connection after the answer, always reaches the leader later.
 */
export function announceAdmission(
  ctx: ProxyContext,
  record: RequestRecord,
  admitted: AdmittedTokens,
  pricing: Pricing,
): void {
  if (!record.metered || ctx.nc.isClosed()) return;
  const usage = { ...zeroUsage(), ...admitted };
  const event = buildEvent({
    ...record,
    endedAt: record.startedAt,
    status: PROXY_LOST_STATUS,
    denyReason: PROXY_LOST_REASON,
    usage,
    cost: computeCost(usage, pricing.rates, pricing.shape),
  });
  ctx.nc.publish(Events.proxyAdmitted(ctx.proxyId, record.id), JSON.stringify(event));
}
