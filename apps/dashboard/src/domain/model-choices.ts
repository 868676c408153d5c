import type { CatalogProvider, Provider } from "@agentnet/contracts";

export interface ModelChoice {
  id: string;
  /** The catalog's name for the model, or its id when the catalog has none. */
  label: string;
}

/** The models one provider serves, for picking a guardrail's allowlist. */
export interface ProviderModelChoices {
  providerId: string;
  providerName: string;
  models: ModelChoice[];
}

/**
 * The models each provider serves: its own model list (configured or filled in by discovery), or
 * the catalog's models when that list is empty, since an empty list allows every catalog model.
 */
export function modelChoices(providers: Provider[], catalog: CatalogProvider[]): ProviderModelChoices[] {
  return providers.map((provider) => {
    const catalogModels = catalog.find((entry) => entry.id === provider.provider_id)?.models ?? [];
    const labelOf = (id: string) => catalogModels.find((model) => model.id === id)?.label || id;
    const models =
      provider.models.length > 0
        ? provider.models.map((model) => ({ id: model.id, label: labelOf(model.id) }))
        : catalogModels.map((model) => ({ id: model.id, label: model.label || model.id }));
    return { providerId: provider.id, providerName: provider.name, models };
  });
}

/**
 * The choices matching a filter typed by the user, ignoring case: a model matches by id or label,
 * and a provider matching by name keeps all its models. Providers left without models drop out.
 */
export function filterModelChoices(choices: ProviderModelChoices[], filter: string): ProviderModelChoices[] {
  const needle = filter.trim().toLowerCase();
  if (needle === "") return choices;
  const matches = (text: string) => text.toLowerCase().includes(needle);
  return choices
    .map((group) =>
      matches(group.providerName)
        ? group
        : { ...group, models: group.models.filter((model) => matches(model.id) || matches(model.label)) },
    )
    .filter((group) => group.models.length > 0);
}

/** Allowed ids no provider lists: typed by hand for a model a provider serves but did not list. */
export const unlistedModels = (selected: readonly string[], choices: ProviderModelChoices[]): string[] =>
  selected.filter((id) => !choices.some((group) => group.models.some((model) => model.id === id)));
