import { type Guardrail, type Policy, type Provider, policyCovers } from "@agentnet/contracts";

export * from "./address";
export * from "./mcp-grants";
export * from "./private-allowance";

/**
 * Which policies cover a caller: enabled ones whose source groups include one of the caller's
 * groups. Order is kept (policies are stored oldest first), which makes choices deterministic.
 */
export function coveringPolicies<P extends Pick<Policy, "enabled" | "source_groups">>(
  policies: readonly P[],
  callerGroupIds: readonly string[],
): P[] {
  return policies.filter((policy) => policyCovers(policy, callerGroupIds));
}

/** What a caller may ask a provider for: every model, or only the listed ones. */
export type ModelAllowance = { all: true } | { all: false; models: ReadonlySet<string> };

type AllowlistSource = Pick<Guardrail, "id" | "checks">;
type GrantingPolicy = Pick<Policy, "guardrail_ids">;

/**
 * The models one policy lets through: every enabled allowlist among its guardrails must list the
 * model (guardrails of one policy compose); none enabled means no restriction.
 */
function policyAllowance(
  policy: GrantingPolicy,
  guardrails: ReadonlyMap<string, AllowlistSource>,
): ModelAllowance {
  let allowed: Set<string> | undefined;
  for (const id of policy.guardrail_ids) {
    const allowlist = guardrails.get(id)?.checks.model_allowlist;
    if (!allowlist?.enabled) continue;
    const listed = new Set(allowlist.models);
    allowed = allowed ? new Set([...allowed].filter((model) => listed.has(model))) : listed;
  }
  return allowed ? { all: false, models: allowed } : { all: true };
}

/**
 * The models a caller may use on a provider through the policies granting it: a model passes when
 * any granting policy lets it through (policies add up), and, when the provider declares model
 * rows, only those (an empty list means every catalog model).
 */
export function modelAllowance(
  provider: Pick<Provider, "models">,
  grantingPolicies: readonly GrantingPolicy[],
  guardrails: ReadonlyMap<string, AllowlistSource>,
): ModelAllowance {
  let union: Set<string> | undefined = new Set();
  for (const policy of grantingPolicies) {
    const allowance = policyAllowance(policy, guardrails);
    if (allowance.all) {
      union = undefined;
      break;
    }
    for (const model of allowance.models) union.add(model);
  }
  const declared = provider.models.map((model) => model.id);
  if (union === undefined)
    return declared.length === 0 ? { all: true } : { all: false, models: new Set(declared) };
  if (declared.length === 0) return { all: false, models: union };
  const declaredSet = new Set(declared);
  return { all: false, models: new Set([...union].filter((model) => declaredSet.has(model))) };
}

export const isModelAllowed = (allowance: ModelAllowance, model: string): boolean =>
  allowance.all || allowance.models.has(model);

export interface ProviderGrant<Prov, Pol> {
  provider: Prov;
  policies: Pol[];
}

/**
 * Enabled providers a caller reaches, each with the covering policies that name it, in the order
 * of the first policy naming them. A disabled provider is unreachable whatever the policies say.
 */
export function reachableProviders<
  Prov extends Pick<Provider, "id" | "enabled">,
  Pol extends Pick<Policy, "enabled" | "source_groups" | "destination_provider_ids">,
>(
  providers: readonly Prov[],
  policies: readonly Pol[],
  callerGroupIds: readonly string[],
): ProviderGrant<Prov, Pol>[] {
  const byId = new Map(providers.map((provider) => [provider.id, provider]));
  const grants = new Map<string, ProviderGrant<Prov, Pol>>();
  for (const policy of coveringPolicies(policies, callerGroupIds)) {
    for (const providerId of policy.destination_provider_ids) {
      const provider = byId.get(providerId);
      if (!provider?.enabled) continue;
      const grant = grants.get(providerId) ?? { provider, policies: [] };
      grant.policies.push(policy);
      grants.set(providerId, grant);
    }
  }
  return [...grants.values()];
}
