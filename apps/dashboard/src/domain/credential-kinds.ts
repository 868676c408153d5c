import type { CredentialKind } from "@agentnet/contracts";

/**
 * What the provider form says about the key field per catalog entry (packages/vendor-auth decides
 * what each entry takes; the control-plane refuses anything else with a 400).
 */
export interface KeyFieldText {
  label: string;
  /** What the entry takes. */
  accepts: string;
  /** The error of a new provider without a key. */
  missing: string;
}

const KEY_FIELDS: Record<string, KeyFieldText> = {
  vertex_api: {
    label: "Service-account key or access token",
    accepts:
      "Paste a Google service-account key file (JSON, with Vertex AI User): the gateway mints and refreshes access tokens from it. A bare OAuth access token also works, until it expires.",
    missing: "paste a service-account key file or an access token",
  },
  azure_api: {
    label: "API key or Entra ID credentials",
    accepts:
      'The resource\'s API key (sent as api-key), or Microsoft Entra ID client credentials as JSON: {"tenant_id", "client_id", "client_secret"} and optionally "authority_host" for a sovereign cloud.',
    missing: "enter the API key or the Entra ID credentials",
  },
  bedrock_api: {
    label: "Bedrock API key or IAM access keys",
    accepts:
      'A Bedrock API key (sent as a bearer token), or IAM access keys as JSON: {"access_key_id", "secret_access_key"} and optionally "session_token" for temporary credentials and "region" when the upstream URL is not bedrock-runtime.<region>.amazonaws.com. The gateway signs each request with the access keys (SigV4); they are never sent.',
    missing: "enter the Bedrock API key or the IAM access keys",
  },
};

export const keyFieldText = (catalogId: string): KeyFieldText =>
  KEY_FIELDS[catalogId] ?? {
    label: "API key",
    accepts: "The vendor API key.",
    missing: "enter the vendor API key",
  };

/** The kind a typed key will be stored as, as far as the form can tell (the control-plane decides). */
export function typedKeyKind(catalogId: string, key: string): CredentialKind | undefined {
  if (key.trim() === "") return undefined;
  const json = key.trimStart().startsWith("{");
  if (catalogId === "vertex_api") return json ? "service_account" : "access_token";
  if (catalogId === "azure_api") return json ? "entra_client_secret" : "api_key";
  if (catalogId === "bedrock_api") return json ? "aws_access_key" : "api_key";
  return json ? undefined : "api_key";
}

/**
 * The warning a bare Vertex access token earns: Google's expire within an hour, and the gateway
 * cannot renew one, so the provider stops working by itself. Shown for a token being typed, or for
 * the stored key when it is one and no new key is typed.
 */
export function shortLivedKeyWarning(
  catalogId: string,
  typedKey: string,
  storedKind: CredentialKind | undefined,
): string | undefined {
  const kind = typedKey.trim() === "" ? storedKind : typedKeyKind(catalogId, typedKey);
  if (catalogId !== "vertex_api" || kind !== "access_token") return undefined;
  return "An access token expires within an hour and the gateway cannot renew it: this provider will stop working by itself. Use a service-account key instead.";
}
