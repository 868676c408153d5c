import { type CatalogEntry, findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import {
  DEFAULT_ROUTING,
  type GatewayProvider,
  type Guardrail,
  type Policy,
  type PolicyRouting,
} from "@agentnet/contracts";
import {
  coveringPolicies,
  isModelAllowed,
  type ModelAllowance,
  modelAllowance,
  type ProviderGrant,
  reachableProviders,
} from "@agentnet/gateway-rules";
import { flavorFits, type Wire } from "../wires";

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

/** A provider the request may go to, the policy that lets it, and the model as sent there. */
export interface Route {
  provider: GatewayProvider;
  catalog: CatalogEntry;
  policy: Policy;
  model: string;
}

export type Decision =
  | (Route & {
      decision: "allow";
      /**
       * Every provider the request may go to, in priority order, the chosen one first: the
       * strategy of `routing` orders them and the next is tried when one fails.
       */
      candidates: readonly Route[];
      /** The chosen provider's authorising policy's routing. */
      routing: PolicyRouting;
    })
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
 *
 * Candidates: a request may go to every provider that would have been chosen had the ones before
 * it not been there, i.e. each fitting provider that knows the model and lets it through, in the
 * same order. A provider named explicitly, or one chosen without knowing the model, is the only
 * candidate: nothing says another would serve what the client asked for.
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
  let knowing: Grant[] = [];
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
    knowing = fitting.filter((candidate) => providerKnowsModel(candidate.provider, model));
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
  const chosen: Route = { provider: grant.provider, catalog: grant.catalog, policy, model };
  return {
    decision: "allow",
    ...chosen,
    candidates: knowing.length > 1 ? candidatesFrom(chosen, knowing, input.guardrails) : [chosen],
    routing: policy.routing ?? DEFAULT_ROUTING,
  };
}

/** What decisions are made on: one snapshot's providers, policies and guardrails. */
export type DecisionConfig = Pick<DecisionInput, "providers" | "policies" | "guardrails">;

/**
 * The decisions made on one snapshot's configuration, each made once: besides it, `decide` reads
 * only the wire, the model and the groups, and a decision is never changed once made. Keyed by the
 * wire itself, not its name: two wires may share a name and fit different flavors (Bedrock's
 * Invoke and Converse). Model names come from clients, so each wire keeps at most `maxPerWire`,
 * starting over when full.
 */
export class Decisions {
  private readonly byWire = new Map<Wire, Map<string, Decision>>();

  constructor(
    private readonly config: DecisionConfig,
    private readonly maxPerWire = 1_024,
  ) {}

  of(wire: Wire, requestedModel: string, groupIds: readonly string[]): Decision {
    let known = this.byWire.get(wire);
    if (!known) {
      known = new Map();
      this.byWire.set(wire, known);
    }
    // Neither a model (identifierProblem) nor a group id holds a line break.
    const key = `${requestedModel}\n${groupIds.join("\n")}`;
    const cached = known.get(key);
    if (cached) return cached;
    const decision = decide({ ...this.config, wire, requestedModel, groupIds });
    if (known.size >= this.maxPerWire) known.clear();
    known.set(key, decision);
    return decision;
  }
}

/** The chosen route, then every later knowing grant a policy lets the model through. */
function candidatesFrom(chosen: Route, knowing: readonly Grant[], guardrails: DecisionInput["guardrails"]) {
  const routes: Route[] = [chosen];
  const start = knowing.findIndex((grant) => grant.provider.id === chosen.provider.id);
  if (start === -1) return routes;
  for (const grant of knowing.slice(start + 1)) {
    const policy = authorisingPolicy(grant, guardrails, chosen.model);
    if (policy)
      routes.push({ provider: grant.provider, catalog: grant.catalog, policy, model: chosen.model });
  }
  return routes;
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
