import { AppError } from "@agentnet/contracts";
import { identityProviderSecretAad, type SealingKeys, unseal } from "@agentnet/sealing";
import { hashToken } from "@agentnet/service-kit";
import * as oidc from "openid-client";
import type { IdentityProviderDoc } from "../store/sign-in-models";

/** A provider's discovered configuration is used this long before it is read again. */
const DISCOVERY_MS = 10 * 60_000;

/**
 * The accounts' OpenID Connect clients (`openid-client`), each from its provider's discovery
 * document, kept while the provider's settings stay the same. The client secret is opened here,
 * in the control-plane, only.
 */
export class OidcClients {
  private readonly discovered = new Map<
    string,
    { fingerprint: string; at: number; config: oidc.Configuration }
  >();

  constructor(private readonly sealingKey: SealingKeys) {}

  /** The client of `provider`'s account. Throws 502 `identity_provider.unreachable`. */
  async of(provider: IdentityProviderDoc): Promise<oidc.Configuration> {
    const secret = unseal(
      this.sealingKey,
      provider.sealed_client_secret,
      identityProviderSecretAad(provider.account_id),
    );
    const fingerprint = hashToken(`${provider.issuer}\0${provider.client_id}\0${secret}`);
    const known = this.discovered.get(provider.account_id);
    if (known?.fingerprint === fingerprint && Date.now() - known.at < DISCOVERY_MS) return known.config;
    const issuer = new URL(provider.issuer);
    try {
      const config = await oidc.discovery(
        issuer,
        provider.client_id,
        secret,
        undefined,
        // http:// is allowed on loopback only (IdentityProviderBody): a provider on this host.
        issuer.protocol === "http:"
          ? { execute: [oidc.allowInsecureRequests], timeout: 10 }
          : { timeout: 10 },
      );
      this.discovered.set(provider.account_id, { fingerprint, at: Date.now(), config });
      return config;
    } catch (error) {
      throw new AppError(
        502,
        "identity_provider.unreachable",
        `the identity provider at ${provider.issuer} could not be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/**
 * The scopes a sign-in asks for: `offline_access` too where the provider offers it, for a refresh
 * token the control-plane later asks the provider again with (src/identity/recheck.ts).
 */
export const signInScopes = (config: oidc.Configuration): string =>
  config.serverMetadata().scopes_supported?.includes("offline_access")
    ? "openid email profile offline_access"
    : "openid email profile";
