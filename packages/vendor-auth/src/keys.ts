import { createPrivateKey } from "node:crypto";
import type { CredentialKind } from "@agentnet/contracts";

export type { CredentialKind };

/*
 * What a provider's stored key is (`CredentialKind`, in contracts). The catalog entry decides
 * which kinds it takes:
 * - `api_key`: sent as it is, through the catalog's auth header template (every entry);
 * - `access_token`: a bare OAuth access token for `vertex_api`, sent as it is; Google's expire
 *   within an hour, so such a provider stops working by itself unless the key is replaced;
 * - `service_account`: a Google service-account key file (JSON) for `vertex_api`; the proxy mints
 *   access tokens from it (JWT bearer grant at its `token_uri`) and refreshes them;
 * - `entra_client_secret`: Microsoft Entra ID client credentials (JSON) for `azure_api`; the proxy
 *   mints tokens for Azure OpenAI and sends `Authorization: Bearer` instead of `api-key`;
 * - `aws_access_key`: AWS IAM access keys (JSON) for `bedrock_api`; the proxy signs each request
 *   with them (SigV4, `src/aws.ts`). A plain `bedrock_api` key is a Bedrock API key, sent as
 *   `Authorization: Bearer` through the template like any API key.
 */

export const CREDENTIAL_KINDS: readonly CredentialKind[] = [
  "api_key",
  "access_token",
  "service_account",
  "entra_client_secret",
  "aws_access_key",
];

/** The fields of a service-account key file the proxy uses (the file has more; they are ignored). */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

/**
 * Microsoft Entra ID client credentials, as a provider's key:
 * `{"tenant_id": "…", "client_id": "…", "client_secret": "…"}` and optionally `"authority_host"`
 * (`https://login.microsoftonline.us` for a sovereign cloud; default `https://login.microsoftonline.com`).
 */
export interface EntraClientSecret {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  authority_host?: string;
}

/**
 * AWS IAM access keys, as a provider's key: `{"access_key_id": "…", "secret_access_key": "…"}`,
 * optionally `"session_token"` (temporary credentials) and `"region"`, the region to sign for when
 * the upstream host does not name one (a VPC endpoint, a local test vendor; `src/aws.ts`).
 */
export interface AwsAccessKey {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
  region?: string;
}

export type KeyDescription =
  | { kind: CredentialKind; problem?: undefined }
  | { kind?: undefined; problem: string };

/** The kinds each catalog entry takes; every other entry takes a plain API key only. */
export const ACCEPTED_KINDS: Readonly<Record<string, readonly CredentialKind[]>> = {
  vertex_api: ["service_account", "access_token"],
  azure_api: ["api_key", "entra_client_secret"],
  bedrock_api: ["api_key", "aws_access_key"],
};

export const acceptedKinds = (catalogId: string): readonly CredentialKind[] =>
  ACCEPTED_KINDS[catalogId] ?? ["api_key"];

const ENTRA_FIELDS = new Set(["tenant_id", "client_id", "client_secret", "authority_host"]);
const AWS_FIELDS = new Set(["access_key_id", "secret_access_key", "session_token", "region"]);

/** An AWS region name: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`. */
export const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** Whether a key is JSON text (a credential to exchange) rather than a key sent as it is. */
export const isJsonKey = (key: string): boolean => key.trimStart().startsWith("{");

/**
 * The kind of `key` for the catalog entry `catalogId`, or why the entry cannot use it. The
 * control-plane refuses a key with a problem (400); the proxy trusts what it stored.
 */
export function describeKey(catalogId: string, key: string): KeyDescription {
  if (!isJsonKey(key)) return { kind: catalogId === "vertex_api" ? "access_token" : "api_key" };
  const parsed = parseObject(key);
  if (typeof parsed === "string") return { problem: `api_key looks like JSON but is not: ${parsed}` };
  if (catalogId === "vertex_api") {
    const account = serviceAccountOf(parsed);
    return typeof account === "string" ? { problem: account } : { kind: "service_account" };
  }
  if (catalogId === "azure_api") {
    const client = entraClientOf(parsed);
    return typeof client === "string" ? { problem: client } : { kind: "entra_client_secret" };
  }
  if (catalogId === "bedrock_api") {
    const keys = awsAccessKeyOf(parsed);
    return typeof keys === "string" ? { problem: keys } : { kind: "aws_access_key" };
  }
  return { problem: `${catalogId} takes an API key, not a JSON credential` };
}

/** A vertex_api key's service account; a string says what is wrong with it. */
export function parseServiceAccountKey(key: string): ServiceAccountKey | string {
  const parsed = parseObject(key);
  return typeof parsed === "string" ? parsed : serviceAccountOf(parsed);
}

/** An azure_api key's Entra ID client credentials; a string says what is wrong with them. */
export function parseEntraClientSecret(key: string): EntraClientSecret | string {
  const parsed = parseObject(key);
  return typeof parsed === "string" ? parsed : entraClientOf(parsed);
}

/** A bedrock_api key's AWS access keys; a string says what is wrong with them. */
export function parseAwsAccessKey(key: string): AwsAccessKey | string {
  const parsed = parseObject(key);
  return typeof parsed === "string" ? parsed : awsAccessKeyOf(parsed);
}

function serviceAccountOf(json: Record<string, unknown>): ServiceAccountKey | string {
  if (json.type !== "service_account") {
    return `a Vertex AI JSON key must be a service-account key ("type": "service_account"), not ${JSON.stringify(json.type ?? null)}`;
  }
  const missing = ["client_email", "private_key", "token_uri"].filter(
    (field) => typeof json[field] !== "string" || json[field] === "",
  );
  if (missing.length > 0) return `the service-account key lacks ${missing.join(", ")}`;
  const account = json as unknown as ServiceAccountKey;
  try {
    createPrivateKey(account.private_key);
  } catch {
    return "the service-account key's private_key is not a PEM private key";
  }
  const problem = tokenEndpointProblem(account.token_uri, "token_uri");
  if (problem) return problem;
  return {
    client_email: account.client_email,
    private_key: account.private_key,
    token_uri: account.token_uri,
    ...(typeof json.private_key_id === "string" ? { private_key_id: json.private_key_id } : {}),
    ...(typeof json.project_id === "string" ? { project_id: json.project_id } : {}),
  };
}

function entraClientOf(json: Record<string, unknown>): EntraClientSecret | string {
  const unknown = Object.keys(json).filter((field) => !ENTRA_FIELDS.has(field));
  const missing = ["tenant_id", "client_id", "client_secret"].filter(
    (field) => typeof json[field] !== "string" || json[field] === "",
  );
  if (missing.length > 0 || unknown.length > 0) {
    return `Entra ID client credentials are {"tenant_id", "client_id", "client_secret"} and optionally "authority_host"${
      missing.length > 0 ? `; missing ${missing.join(", ")}` : ""
    }${unknown.length > 0 ? `; unknown ${unknown.join(", ")}` : ""}`;
  }
  const client = json as unknown as EntraClientSecret;
  if (!/^[A-Za-z0-9.-]{1,256}$/.test(client.tenant_id)) {
    return "tenant_id must be a tenant id (a GUID) or domain name";
  }
  if (json.authority_host !== undefined) {
    if (typeof json.authority_host !== "string") return "authority_host must be an https URL";
    const problem = tokenEndpointProblem(json.authority_host, "authority_host");
    if (problem) return problem;
    if (!json.authority_host.startsWith("https:")) return "authority_host must be an https URL";
  }
  return {
    tenant_id: client.tenant_id,
    client_id: client.client_id,
    client_secret: client.client_secret,
    ...(typeof json.authority_host === "string" ? { authority_host: json.authority_host } : {}),
  };
}

function awsAccessKeyOf(json: Record<string, unknown>): AwsAccessKey | string {
  const unknown = Object.keys(json).filter((field) => !AWS_FIELDS.has(field));
  const missing = ["access_key_id", "secret_access_key"].filter(
    (field) => typeof json[field] !== "string" || json[field] === "",
  );
  if (missing.length > 0 || unknown.length > 0) {
    return `AWS access keys are {"access_key_id", "secret_access_key"} and optionally "session_token", "region"${
      missing.length > 0 ? `; missing ${missing.join(", ")}` : ""
    }${unknown.length > 0 ? `; unknown ${unknown.join(", ")}` : ""}`;
  }
  const keys = json as unknown as AwsAccessKey;
  // It is sent in the Authorization header's Credential=: letters and digits only, as AWS issues.
  if (!/^[A-Za-z0-9]{1,128}$/.test(keys.access_key_id)) {
    return "access_key_id must be an AWS access key id (letters and digits, e.g. AKIA…)";
  }
  if (json.session_token !== undefined) {
    // Sent as x-amz-security-token: visible ASCII only, so it cannot break a header.
    if (typeof json.session_token !== "string" || !/^[\x21-\x7e]{1,8192}$/.test(json.session_token)) {
      return "session_token must be the session token of temporary credentials";
    }
  }
  if (json.region !== undefined) {
    if (typeof json.region !== "string" || !AWS_REGION.test(json.region)) {
      return "region must be an AWS region name such as us-east-1";
    }
  }
  return {
    access_key_id: keys.access_key_id,
    secret_access_key: keys.secret_access_key,
    ...(typeof json.session_token === "string" ? { session_token: json.session_token } : {}),
    ...(typeof json.region === "string" ? { region: json.region } : {}),
  };
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A token endpoint is https, or plain http on loopback only (local test endpoints): the proxy
 * posts a signed grant there, which must not cross a network in clear.
 */
function tokenEndpointProblem(value: string, field: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} must be an absolute URL`;
  }
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return `${field} must be an https URL`;
}

function parseObject(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which holds a secret.
    return "not valid JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  return value as Record<string, unknown>;
}
