import {
  type BudgetRuleBody,
  type Caller,
  ControlPlane,
  type ErrorDetail,
  unprocessable,
} from "@agentnet/contracts";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import type { BudgetRuleDoc } from "../store/agent-models";
import { toBudgetRule } from "../store/agent-views";
import { announceConfigChange, type HandlerContext, handle, loadOwned, missingIds } from "./context";
import { assertConfigFits } from "./snapshot";

export function registerBudgetRuleHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  /** Targets must be groups and users of the caller's account. */
  const requireTargetsExist = async (caller: Caller, body: BudgetRuleBody) => {
    const [groups, users] = await Promise.all([
      missingIds(models.Group, caller.account_id, body.target_groups),
      missingIds(models.User, caller.account_id, body.target_users),
    ]);
    const details: ErrorDetail[] = [
      ...groups.map((id) => ({ path: "target_groups", message: `unknown group ${id}` })),
      ...users.map((id) => ({ path: "target_users", message: `unknown user ${id}` })),
    ];
    if (details.length > 0)
      throw unprocessable("budget_rule.unknown_target", details.map((d) => d.message).join("; "), details);
  };

  const fields = (body: BudgetRuleBody) => ({
    name: body.name,
    enabled: body.enabled,
    target_groups: body.target_groups,
    target_users: body.target_users,
    limits: body.limits,
  });

  handle(ctx, ControlPlane.budgetRulesList, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const docs = await models.BudgetRule.find({ account_id: caller.account_id })
      .sort({ created_at: 1 })
      .lean();
    return docs.map(toBudgetRule);
  });

  handle(ctx, ControlPlane.budgetRulesGet, async ({ caller, rule_id }) => {
    requireAccountWideGrant(caller);
    return toBudgetRule(await loadOwned<BudgetRuleDoc>(models.BudgetRule, caller, rule_id, "budget rule"));
  });

  handleCreate(ctx, ControlPlane.budgetRulesCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    await requireTargetsExist(caller, body);
    const document = { _id: id, account_id: caller.account_id, ...fields(body) };
    await assertConfigFits(ctx, caller.account_id, { after: document });
    const created = await models.BudgetRule.create(document);
    announceConfigChange(ctx, caller.account_id);
    return toBudgetRule(created.toObject());
  });

  handleChange(
    ctx,
    ControlPlane.budgetRulesUpdate,
    { id: (r) => r.rule_id },
    async ({ caller, rule_id, body }) => {
      requireWriter(caller);
      const stored = await loadOwned<BudgetRuleDoc>(models.BudgetRule, caller, rule_id, "budget rule");
      await requireTargetsExist(caller, body);
      await assertConfigFits(ctx, caller.account_id, {
        before: stored,
        after: { ...stored, ...fields(body) },
      });
      const updated = await models.BudgetRule.findOneAndUpdate(
        { _id: stored._id, account_id: caller.account_id },
        { $set: fields(body) },
        { new: true },
      ).lean();
      announceConfigChange(ctx, caller.account_id);
      return toBudgetRule(updated ?? stored);
    },
  );

  handleChange(ctx, ControlPlane.budgetRulesDelete, { id: (r) => r.rule_id }, async ({ caller, rule_id }) => {
    requireWriter(caller);
    const stored = await loadOwned<BudgetRuleDoc>(models.BudgetRule, caller, rule_id, "budget rule");
    await models.BudgetRule.deleteOne({ _id: stored._id, account_id: caller.account_id });
    announceConfigChange(ctx, caller.account_id);
    return {};
  });
}
