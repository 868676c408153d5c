import {
  type Caller,
  ControlPlane,
  type ErrorDetail,
  type PolicyBody,
  unprocessable,
} from "@agentnet/contracts";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import { assertWeightsNameDestinations } from "../domain/routing";
import type { PolicyDoc } from "../store/agent-models";
import { toPolicy } from "../store/agent-views";
import { announceConfigChange, type HandlerContext, handle, loadOwned, missingIds } from "./context";
import { assertConfigFits } from "./snapshot";

export function registerPolicyHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  /** Every group, provider, guardrail and MCP server a policy names must exist in the caller's account. */
  const requireReferencesExist = async (caller: Caller, body: PolicyBody) => {
    const [groups, providers, guardrails, mcpServers] = await Promise.all([
      missingIds(models.Group, caller.account_id, body.source_groups),
      missingIds(models.Provider, caller.account_id, body.destination_provider_ids),
      missingIds(models.Guardrail, caller.account_id, body.guardrail_ids),
      missingIds(
        models.McpServer,
        caller.account_id,
        body.mcp_servers.map((grant) => grant.server_id),
      ),
    ]);
    const details: ErrorDetail[] = [
      ...groups.map((id) => ({ path: "source_groups", message: `unknown group ${id}` })),
      ...providers.map((id) => ({ path: "destination_provider_ids", message: `unknown provider ${id}` })),
      ...guardrails.map((id) => ({ path: "guardrail_ids", message: `unknown guardrail ${id}` })),
      ...mcpServers.map((id) => ({ path: "mcp_servers", message: `unknown MCP server ${id}` })),
    ];
    if (details.length > 0) {
      throw unprocessable("policy.unknown_reference", details.map((d) => d.message).join("; "), details);
    }
  };

  const fields = (body: PolicyBody) => ({
    name: body.name,
    description: body.description,
    enabled: body.enabled,
    source_groups: body.source_groups,
    destination_provider_ids: body.destination_provider_ids,
    guardrail_ids: body.guardrail_ids,
    mcp_servers: body.mcp_servers,
    limits: body.limits,
    routing: body.routing,
  });

  /** PUT replaces the whole policy: an optional part it leaves out is removed from the stored one. */
  const replacement = (body: PolicyBody) => {
    const { limits, routing, ...rest } = fields(body);
    const set = { ...rest, ...(limits ? { limits } : {}), ...(routing ? { routing } : {}) };
    const unset = { ...(limits ? {} : { limits: 1 }), ...(routing ? {} : { routing: 1 }) };
    return Object.keys(unset).length > 0 ? { $set: set, $unset: unset } : { $set: set };
  };

  handle(ctx, ControlPlane.policiesList, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const docs = await models.Policy.find({ account_id: caller.account_id }).sort({ created_at: 1 }).lean();
    return docs.map(toPolicy);
  });

  handle(ctx, ControlPlane.policiesGet, async ({ caller, policy_id }) => {
    requireAccountWideGrant(caller);
    return toPolicy(await loadOwned<PolicyDoc>(models.Policy, caller, policy_id, "policy"));
  });

  handleCreate(ctx, ControlPlane.policiesCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    assertWeightsNameDestinations(body);
    await requireReferencesExist(caller, body);
    const document = { _id: id, account_id: caller.account_id, ...fields(body) };
    await assertConfigFits(ctx, caller.account_id, { after: document });
    const created = await models.Policy.create(document);
    announceConfigChange(ctx, caller.account_id);
    return toPolicy(created.toObject());
  });

  handleChange(
    ctx,
    ControlPlane.policiesUpdate,
    { id: (r) => r.policy_id },
    async ({ caller, policy_id, body }) => {
      requireWriter(caller);
      const stored = await loadOwned<PolicyDoc>(models.Policy, caller, policy_id, "policy");
      assertWeightsNameDestinations(body);
      await requireReferencesExist(caller, body);
      await assertConfigFits(ctx, caller.account_id, {
        before: stored,
        after: { ...stored, ...fields(body) },
      });
      const updated = await models.Policy.findOneAndUpdate(
        { _id: stored._id, account_id: caller.account_id },
        replacement(body),
        { new: true },
      ).lean();
      announceConfigChange(ctx, caller.account_id);
      return toPolicy(updated ?? stored);
    },
  );

  handleChange(
    ctx,
    ControlPlane.policiesDelete,
    { id: (r) => r.policy_id },
    async ({ caller, policy_id }) => {
      requireWriter(caller);
      const stored = await loadOwned<PolicyDoc>(models.Policy, caller, policy_id, "policy");
      await models.Policy.deleteOne({ _id: stored._id, account_id: caller.account_id });
      announceConfigChange(ctx, caller.account_id);
      return {};
    },
  );
}
