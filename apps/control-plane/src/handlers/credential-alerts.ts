import { jsonOrUndefined, publishEvent } from "@agentnet/bus";
import { type AlertMessage, AlertSubjects, CredentialRejectedNotice, QUEUE } from "@agentnet/contracts";
import type { HandlerContext } from "./context";

const HOUR_MS = 3600 * 1000;

/**
 * `agn.proxy.credential_rejected`: a vendor answered a proxied request 401, so the provider's key
 * was revoked or rotated at the vendor. Becomes one `provider.credential_failed` alert per
 * provider per clock hour (UTC): its key names the hour, so the notifier records it once however
 * many proxies and requests saw the 401. Proxies already send at most one notice a minute per
 * provider; keys announced this hour are remembered here so repeats do not reach the stream.
 */
export function registerCredentialAlerts(ctx: HandlerContext) {
  const announced = new Map<string, number>();
  const forgetPast = (now: number) => {
    for (const [key, hourEnd] of announced) if (hourEnd <= now) announced.delete(key);
  };

  const raise = async (notice: CredentialRejectedNotice) => {
    const now = Date.now();
    const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
    const key = `provider|${notice.account_id}|${notice.provider_id}|${new Date(hourStart).toISOString()}`;
    forgetPast(now);
    if (announced.has(key)) return;
    const provider = await ctx.models.Provider.findOne(
      { _id: notice.provider_id, account_id: notice.account_id },
      { name: 1, provider_id: 1 },
    ).lean();
    if (!provider) return;
    const message: AlertMessage = {
      v: 1,
      key,
      alert: {
        type: "provider.credential_failed",
        account_id: notice.account_id,
        occurred_at: notice.at,
        provider: {
          id: provider._id,
          name: provider.name,
          provider_id: provider.provider_id,
          upstream_status: notice.upstream_status,
          detected_by: "gateway_proxy",
        },
      },
    };
    await publishEvent(ctx.nc, AlertSubjects.provider(notice.account_id), message, key);
    announced.set(key, hourStart + HOUR_MS);
    ctx.logger.warn(
      { account_id: notice.account_id, provider: notice.provider_id, status: notice.upstream_status },
      "the vendor refused a provider's credential",
    );
  };

  ctx.nc.subscribe(AlertSubjects.credentialRejected, {
    queue: QUEUE.controlPlane,
    callback: (error, msg) => {
      if (error) return;
      const notice = CredentialRejectedNotice.safeParse(jsonOrUndefined(msg.string()));
      if (!notice.success) return;
      raise(notice.data).catch((err: unknown) =>
        ctx.logger.error({ err }, "cannot raise the alert of a refused credential"),
      );
    },
  });
}
