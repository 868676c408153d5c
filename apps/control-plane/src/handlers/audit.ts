import { ControlPlane, DEFAULT_AUDIT_RETENTION_DAYS, notFound } from "@agentnet/contracts";
import { handleChange } from "../audit/changes";
import { actorOf } from "../audit/journal";
import { requireAccountWideGrant, requireOwner } from "../domain/access";
import { createListingBook, type HandlerContext, handle } from "./context";

/** The audit trail's reads (owner, admin, auditor) and the api-gateway's refusals (docs/API.md "Audit trail"). */
export function registerAuditHandlers(ctx: HandlerContext) {
  const listings = createListingBook(ctx);

  handle(ctx, ControlPlane.auditList, ({ caller, query, page, version }) => {
    requireAccountWideGrant(caller);
    return listings.page(`${caller.account_id}/${JSON.stringify(query)}`, { page, version }, async () =>
      JSON.stringify(await ctx.audit.list(caller.account_id, query)),
    );
  });

  handle(ctx, ControlPlane.auditGet, async ({ caller, seq }) => {
    requireAccountWideGrant(caller);
    const entry = await ctx.audit.get(caller.account_id, seq);
    if (!entry) throw notFound(`audit entry ${seq}`);
    return entry;
  });

  handle(ctx, ControlPlane.auditVerify, ({ caller }) => {
    requireAccountWideGrant(caller);
    return ctx.audit.verify(caller.account_id);
  });

  handle(ctx, ControlPlane.auditSettingsGet, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const stored = await ctx.models.AuditSettings.findOne({ _id: caller.account_id }).lean();
    return { retention_days: stored?.retention_days ?? DEFAULT_AUDIT_RETENTION_DAYS };
  });

  handleChange(ctx, ControlPlane.auditSettingsUpdate, {}, async ({ caller, body }) => {
    requireOwner(caller);
    const stored = await ctx.models.AuditSettings.findOneAndUpdate(
      { _id: caller.account_id },
      { $set: { account_id: caller.account_id, retention_days: body.retention_days } },
      { upsert: true, new: true },
    ).lean();
    return { retention_days: stored?.retention_days ?? body.retention_days };
  });

  handle(ctx, ControlPlane.auditRefused, async ({ caller, refusal }) => {
    await ctx.audit.record({
      account_id: caller.account_id,
      actor: actorOf(caller),
      action: refusal.action,
      target: refusal.target,
      outcome: refusal.status === 401 || refusal.status === 403 ? "refused" : "failed",
      status: refusal.status,
      error_code: refusal.error_code,
    });
    return {};
  });
}
