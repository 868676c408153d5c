import { AnthropicBetas, type CatalogProvider } from "@agentnet/contracts";

/**
 * The provider form's "Claude betas" field (docs/API.md, "Claude betas per upstream"): the
 * `anthropic-beta` values the proxy lets through to this provider's upstream. Shown for entries
 * that serve Claude: Anthropic's own API, and those whose catalog entry lists the betas it takes
 * (Vertex).
 */
export const servesClaudeBetas = (entry: CatalogProvider): boolean =>
  entry.id === "anthropic_api" || entry.anthropic_betas !== undefined;

/** A list as the field shows it. */
export const betasText = (betas: readonly string[] | undefined): string => (betas ?? []).join(", ");

/** What the field says when empty: the catalog entry's list applies. */
export const catalogBetasHint = (entry: CatalogProvider): string =>
  entry.anthropic_betas
    ? `Empty uses the catalog's list: ${betasText(entry.anthropic_betas)}.`
    : "Empty lets every beta through (Anthropic takes them all).";

export type ParsedBetas =
  | { betas: string[] | null; error?: undefined }
  | { betas?: undefined; error: string };

/**
 * The field's text as the body's `anthropic_betas`: values split on commas, spaces or lines, each
 * once; empty is null (the catalog's list). A value the contracts refuse is the field's error.
 */
export function parseBetas(text: string): ParsedBetas {
  const values = [...new Set(text.split(/[\s,]+/).filter((value) => value !== ""))];
  if (values.length === 0) return { betas: null };
  const parsed = AnthropicBetas.safeParse(values);
  if (parsed.success) return { betas: parsed.data };
  const issue = parsed.error.issues[0];
  const index = issue?.path[0];
  const named = typeof index === "number" ? `${values[index]}: ` : "";
  return { error: `${named}${issue?.message ?? "invalid"}` };
}
