import { ControlPlane } from "@agentnet/contracts";
import { actorOf } from "../audit/journal";
import { requireAccountWideGrant } from "../domain/access";
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

  handle(ctx, ControlPlane.auditVerify, ({ caller }) => {
    requireAccountWideGrant(caller);
    return ctx.audit.verify(caller.account_id);
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
