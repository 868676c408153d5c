import { ControlPlane } from "@agentnet/contracts";
import { buildAgentConfig } from "../domain/agent-config";
import { toBudgetRule, toGatewayProvider, toGuardrail, toPolicy, toSettings } from "../store/agent-views";
import { type HandlerContext, handle } from "./context";

export function registerAgentConfigHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const loadAccountConfig = async (accountId: string) => {
    const byAccount = { account_id: accountId };
    const [settings, providers, policies, guardrails, budgetRules] = await Promise.all([
      models.Settings.findOne(byAccount).lean(),
      models.Provider.find(byAccount).sort({ created_at: 1 }).lean(),
      models.Policy.find(byAccount).sort({ created_at: 1 }).lean(),
      models.Guardrail.find(byAccount).sort({ created_at: 1 }).lean(),
      models.BudgetRule.find(byAccount).sort({ created_at: 1 }).lean(),
    ]);
    return {
      settings: settings ? toSettings(settings) : null,
      providers: providers.map(toGatewayProvider),
      policies: policies.map(toPolicy),
      guardrails: guardrails.map(toGuardrail),
      budget_rules: budgetRules.map(toBudgetRule),
    };
  };

  // Open to every authenticated caller: it shows only what that caller can reach.
  handle(ctx, ControlPlane.agentConfig, async ({ caller }) => {
    const config = await loadAccountConfig(caller.account_id);
    return buildAgentConfig({ ...config, callerGroupIds: caller.group_ids });
  });

  handle(ctx, ControlPlane.gatewaySnapshot, async ({ account_id }) => ({
    account_id,
    ...(await loadAccountConfig(account_id)),
    generated_at: new Date().toISOString(),
  }));
}
