import { ControlPlane, type GuardrailBody } from "@agentnet/contracts";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import type { GuardrailDoc } from "../store/agent-models";
import { toGuardrail } from "../store/agent-views";
import { announceConfigChange, type HandlerContext, handle, loadOwned, refuseIfPoliciesUse } from "./context";
import { assertConfigFits } from "./snapshot";

export function registerGuardrailHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  const fields = (body: GuardrailBody) => ({
    name: body.name,
    description: body.description,
    checks: body.checks,
  });

  handle(ctx, ControlPlane.guardrailsList, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const docs = await models.Guardrail.find({ account_id: caller.account_id })
      .sort({ created_at: 1 })
      .lean();
    return docs.map(toGuardrail);
  });

  handle(ctx, ControlPlane.guardrailsGet, async ({ caller, guardrail_id }) => {
    requireAccountWideGrant(caller);
    return toGuardrail(await loadOwned<GuardrailDoc>(models.Guardrail, caller, guardrail_id, "guardrail"));
  });

  handleCreate(ctx, ControlPlane.guardrailsCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    const document = { _id: id, account_id: caller.account_id, ...fields(body) };
    await assertConfigFits(ctx, caller.account_id, { after: document });
    const created = await models.Guardrail.create(document);
    announceConfigChange(ctx, caller.account_id);
    return toGuardrail(created.toObject());
  });

  handleChange(
    ctx,
    ControlPlane.guardrailsUpdate,
    { id: (r) => r.guardrail_id },
    async ({ caller, guardrail_id, body }) => {
      requireWriter(caller);
      const stored = await loadOwned<GuardrailDoc>(models.Guardrail, caller, guardrail_id, "guardrail");
      await assertConfigFits(ctx, caller.account_id, {
        before: stored,
        after: { ...stored, ...fields(body) },
      });
      const updated = await models.Guardrail.findOneAndUpdate(
        { _id: stored._id, account_id: caller.account_id },
        { $set: fields(body) },
        { new: true },
      ).lean();
      announceConfigChange(ctx, caller.account_id);
      return toGuardrail(updated ?? stored);
    },
  );

  handleChange(
    ctx,
    ControlPlane.guardrailsDelete,
    { id: (r) => r.guardrail_id },
    async ({ caller, guardrail_id }) => {
      requireWriter(caller);
      const stored = await loadOwned<GuardrailDoc>(models.Guardrail, caller, guardrail_id, "guardrail");
      await refuseIfPoliciesUse(ctx, caller.account_id, {
        field: "guardrail_ids",
        id: stored._id,
        what: "guardrail",
        code: "guardrail",
      });
      await models.Guardrail.deleteOne({ _id: stored._id, account_id: caller.account_id });
      announceConfigChange(ctx, caller.account_id);
      return {};
    },
  );
}
