import { type CatalogEntry, findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import type { GatewayProvider, Guardrail, Policy } from "@agentnet/contracts";
import {
  coveringPolicies,
  isModelAllowed,
  type ModelAllowance,
  modelAllowance,
  type ProviderGrant,
  reachableProviders,
} from "@agentnet/gateway-rules";
import { flavorFits, type Wire } from "./wire";

export type DenyReason =
  | "llm_policy.no_matching_policy"
  | "guardrail.model_not_allowed"
  | "provider.disabled"
  | "gateway.flavor_mismatch";

export interface DecisionInput {
  providers: readonly GatewayProvider[];
  policies: readonly Policy[];
  guardrails: ReadonlyMap<string, Guardrail>;
  groupIds: readonly string[];
  /** The `model` of the request body, possibly `provider-name/model`. */
  requestedModel: string;
  wire: Wire;
}

export type Decision =
  | { decision: "allow"; provider: GatewayProvider; catalog: CatalogEntry; policy: Policy; model: string }
  | { decision: "deny"; reason: DenyReason; provider?: GatewayProvider; policy?: Policy; model: string };

type Grant = ProviderGrant<GatewayProvider, Policy> & { catalog: CatalogEntry };

/**
 * `provider-name/model` names a provider explicitly (display name, case-insensitive); the longest
 * matching name wins so "acme" and "acme/eu" can coexist. A model id that merely contains a slash
 * (`meta-llama/Llama-3`) is left alone unless its prefix is a provider's name.
 */
export function splitExplicitProvider(
  providers: readonly GatewayProvider[],
  requested: string,
): { provider: GatewayProvider; model: string } | undefined {
  const lower = requested.toLowerCase();
  let best: GatewayProvider | undefined;
  for (const provider of providers) {
    const prefix = `${provider.name.toLowerCase()}/`;
    if (lower.startsWith(prefix) && lower.length > prefix.length) {
      if (!best || provider.name.length > best.name.length) best = provider;
    }
  }
  return best ? { provider: best, model: requested.slice(best.name.length + 1) } : undefined;
}

/** The provider declares the model (its model rows), or, declaring none, its catalog entry knows it. */
export function providerKnowsModel(provider: GatewayProvider, model: string): boolean {
  if (provider.models.length > 0) return provider.models.some((row) => row.id === model);
  return findCatalogModel(provider.provider_id, model) !== undefined;
}

/** Allowlists name catalog model ids; a dated alias the SDK sends counts as its catalog model. */
function allows(allowance: ModelAllowance, provider: GatewayProvider, model: string): boolean {
  if (isModelAllowed(allowance, model)) return true;
  const canonical = findCatalogModel(provider.provider_id, model)?.id;
  return canonical !== undefined && canonical !== model && isModelAllowed(allowance, canonical);
}

/** The first granting policy (policy order) that lets the model through: it authorises the request. */
function authorisingPolicy(grant: Grant, guardrails: DecisionInput["guardrails"], model: string) {
  return grant.policies.find((policy) =>
    allows(modelAllowance(grant.provider, [policy], guardrails), grant.provider, model),
  );
}

/** A covering policy names a provider that is disabled: the caller would reach it otherwise. */
function disabledDestination(input: DecisionInput, fits: (provider: GatewayProvider) => boolean) {
  const byId = new Map(input.providers.map((provider) => [provider.id, provider]));
  for (const policy of coveringPolicies(input.policies, input.groupIds)) {
    for (const id of policy.destination_provider_ids) {
      const provider = byId.get(id);
      if (provider && !provider.enabled && fits(provider)) return { provider, policy };
    }
  }
  return undefined;
}

const catalogOf = (provider: GatewayProvider) => findCatalogProvider(provider.provider_id);

function fitsWire(wire: Wire) {
  return (provider: GatewayProvider) => {
    const catalog = catalogOf(provider);
    return catalog !== undefined && flavorFits(wire, catalog.api_flavor);
  };
}

/**
 * Decides one request: which provider serves it and which policy authorises it, or why not.
 *
 * Model → provider: `provider-name/model` picks that provider; otherwise the first reachable
 * provider (policy order) whose flavor fits the route and that knows the model and allows it,
 * else the first that knows it, else the first of a fitting flavor.
 */
export function decide(input: DecisionInput): Decision {
  const fits = fitsWire(input.wire);
  const grants: Grant[] = reachableProviders(input.providers, input.policies, input.groupIds).flatMap(
    (grant) => {
      const catalog = catalogOf(grant.provider);
      return catalog ? [{ ...grant, catalog }] : [];
    },
  );
  const explicit = splitExplicitProvider(input.providers, input.requestedModel);
  const model = explicit?.model ?? input.requestedModel;

  let grant: Grant | undefined;
  if (explicit) {
    grant = grants.find((candidate) => candidate.provider.id === explicit.provider.id);
    if (grant && !fits(grant.provider)) {
      return { decision: "deny", reason: "gateway.flavor_mismatch", provider: grant.provider, model };
    }
    if (!grant) {
      const disabled = disabledDestination(input, (p) => p.id === explicit.provider.id);
      return disabled
        ? { decision: "deny", reason: "provider.disabled", ...disabled, model }
        : { decision: "deny", reason: "llm_policy.no_matching_policy", model };
    }
  } else {
    const fitting = grants.filter((candidate) => fits(candidate.provider));
    const knowing = fitting.filter((candidate) => providerKnowsModel(candidate.provider, model));
    grant =
      knowing.find((candidate) => authorisingPolicy(candidate, input.guardrails, model)) ??
      knowing[0] ??
      fitting[0];
    if (!grant) {
      const disabled = disabledDestination(input, fits);
      return disabled
        ? { decision: "deny", reason: "provider.disabled", ...disabled, model }
        : { decision: "deny", reason: "llm_policy.no_matching_policy", model };
    }
  }

  const policy = authorisingPolicy(grant, input.guardrails, model);
  if (!policy) {
    return {
      decision: "deny",
      reason: "guardrail.model_not_allowed",
      provider: grant.provider,
      ...(grant.policies[0] ? { policy: grant.policies[0] } : {}),
      model,
    };
  }
  return { decision: "allow", provider: grant.provider, catalog: grant.catalog, policy, model };
}

/** Models a caller may name on a provider, for GET /v1/models. */
export function listableModels(
  grant: ProviderGrant<GatewayProvider, Policy>,
  guardrails: DecisionInput["guardrails"],
) {
  const allowance = modelAllowance(grant.provider, grant.policies, guardrails);
  if (!allowance.all) return [...allowance.models];
  if (grant.provider.models.length > 0) return grant.provider.models.map((row) => row.id);
  return (catalogOf(grant.provider)?.models ?? []).map((row) => row.id);
}
