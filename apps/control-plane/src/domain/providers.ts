import {
  badRequest,
  type CreateProviderBody,
  type CredentialKind,
  normaliseExtraValues,
  type UpdateProviderBody,
} from "@agentnet/contracts";
import { describeKey } from "@agentnet/vendor-auth/keys";

/** The writable fields of a stored provider. */
export interface ProviderFields {
  provider_id: string;
  name: string;
  upstream_url: string;
  models: CreateProviderBody["models"];
  extra_values: Record<string, string>;
  identity_header_user_id: string;
  identity_header_groups: string;
  enabled: boolean;
  skip_tls_verification: boolean;
  metadata_disabled: boolean;
  /** null (absent on records stored before it existed): the catalog entry's list applies. */
  anthropic_betas?: string[] | null;
}

export const fieldsFromCreate = (body: CreateProviderBody): ProviderFields => ({
  provider_id: body.provider_id,
  name: body.name,
  upstream_url: body.upstream_url,
  models: body.models,
  extra_values: normaliseExtraValues(body.extra_values),
  identity_header_user_id: body.identity_header_user_id,
  identity_header_groups: body.identity_header_groups,
  enabled: body.enabled,
  skip_tls_verification: body.skip_tls_verification,
  metadata_disabled: body.metadata_disabled,
  anthropic_betas: body.anthropic_betas ?? null,
});

/** A PUT: fields it carries replace the stored ones (extra_values wholesale, "" dropping a key); omitted ones stay. */
export const mergeProviderUpdate = (stored: ProviderFields, body: UpdateProviderBody): ProviderFields => ({
  provider_id: body.provider_id,
  name: body.name,
  upstream_url: body.upstream_url,
  models: body.models ?? stored.models,
  extra_values: body.extra_values ? normaliseExtraValues(body.extra_values) : stored.extra_values,
  identity_header_user_id: body.identity_header_user_id ?? stored.identity_header_user_id,
  identity_header_groups: body.identity_header_groups ?? stored.identity_header_groups,
  enabled: body.enabled ?? stored.enabled,
  skip_tls_verification: body.skip_tls_verification ?? stored.skip_tls_verification,
  metadata_disabled: body.metadata_disabled ?? stored.metadata_disabled,
  // null clears the list back to the catalog's, so only an omitted one keeps it.
  anthropic_betas:
    body.anthropic_betas === undefined ? (stored.anthropic_betas ?? null) : body.anthropic_betas,
});

/**
 * The spec's four triggers of a vendor re-check on update: a changed upstream_url, a changed API
 * key, a changed catalog provider, or skip_tls_verification switched back to false. Renames,
 * model rows and price edits are stored without one.
 */
export function needsVendorCheck(
  stored: ProviderFields,
  next: ProviderFields,
  keys: { stored: string; sent: string | undefined },
): boolean {
  return (
    stored.upstream_url !== next.upstream_url ||
    (keys.sent !== undefined && keys.sent !== keys.stored) ||
    stored.provider_id !== next.provider_id ||
    (stored.skip_tls_verification && !next.skip_tls_verification)
  );
}

/**
 * The kind of a key written for a catalog entry (packages/vendor-auth): a plain key, a bare Vertex
 * access token, a Google service-account key or Entra ID client credentials. A JSON credential the
 * entry does not take, or one that is malformed, is a 400 naming what is wrong (never the key).
 */
export function credentialKindOf(catalogId: string, apiKey: string): CredentialKind {
  const description = describeKey(catalogId, apiKey);
  if (description.kind) return description.kind;
  throw badRequest(`api_key: ${description.problem}`, [{ path: "api_key", message: description.problem }]);
}
