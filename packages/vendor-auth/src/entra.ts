import { Agent } from "node:https";
import { rootCertificates } from "node:tls";
import { ClientSecretCredential, type ClientSecretCredentialOptions } from "@azure/identity";
import type { MintedToken } from "./google";
import type { EntraClientSecret } from "./keys";

/** The scope Azure OpenAI (Cognitive Services) tokens are minted for. */
export const AZURE_COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default";

export interface EntraOptions {
  timeoutMs: number;
  /** An extra CA (PEM) to trust for the authority, besides the public ones: a test authority's. */
  trustedCa?: string;
}

/**
 * An Azure OpenAI access token for Entra ID client credentials, from a fresh
 * `ClientSecretCredential` each time (MSAL's own cache would answer a refresh with the token being
 * replaced). A key naming `authority_host` (a sovereign cloud, a local test authority) skips
 * instance discovery, which only the public cloud answers, and reads that host's OpenID
 * configuration instead. MSAL takes only https authorities.
 */
export async function mintEntraToken(client: EntraClientSecret, options: EntraOptions): Promise<MintedToken> {
  const credentialOptions: ClientSecretCredentialOptions = {
    retryOptions: { maxRetries: 1 },
  };
  if (client.authority_host) {
    credentialOptions.authorityHost = client.authority_host;
    credentialOptions.disableInstanceDiscovery = true;
  }
  if (options.trustedCa) credentialOptions.agent = trustingAgent(options.trustedCa);
  const credential = new ClientSecretCredential(
    client.tenant_id,
    client.client_id,
    client.client_secret,
    credentialOptions,
  );
  const signal = AbortSignal.timeout(options.timeoutMs);
  const token = await credential.getToken(AZURE_COGNITIVE_SERVICES_SCOPE, { abortSignal: signal });
  return { token: token.token, expiresAt: token.expiresOnTimestamp };
}

const agents = new Map<string, Agent>();

/** One keep-alive agent per trusted CA: the public roots and that CA. */
function trustingAgent(ca: string): Agent {
  let agent = agents.get(ca);
  if (!agent) {
    agent = new Agent({ ca: [...rootCertificates, ca], keepAlive: true });
    agents.set(ca, agent);
  }
  return agent;
}
