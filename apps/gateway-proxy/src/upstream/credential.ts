import type { GatewayProvider } from "@agentnet/contracts";
import { allowanceNames, type PrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import {
  type CatalogAuth,
  CredentialUnavailableError,
  type SignableRequest,
  type UpstreamAuth,
} from "@agentnet/vendor-auth";
import { apiKeyOf, type ProxyContext } from "../context";
import type { AccountView } from "../snapshot/cache";

export { CredentialUnavailableError, type SignableRequest, type UpstreamAuth };

/**
 * The credential header of a request to `provider`: its unsealed key through the catalog's
 * template, or a bearer token minted from it (a service-account key for Vertex, Entra ID client
 * credentials for Azure; packages/vendor-auth). Synchronous for a plain key or a cached token, so
 * the hot path awaits only while a token is minted:
 *
 *   const pending = upstreamAuth(ctx, view, provider, catalog);
 *   const auth = pending instanceof Promise ? await pending : pending;
 *
 * Throws, or the promise rejects with, `CredentialUnavailableError` (502
 * `provider.credential_unavailable`; another candidate may serve) when the key cannot be unsealed,
 * is not usable, or no token can be minted. Its message is safe to log and to answer with.
 */
export function upstreamAuth(
  ctx: ProxyContext,
  view: AccountView,
  provider: GatewayProvider,
  catalog: CatalogAuth,
): UpstreamAuth | Promise<UpstreamAuth> {
  let key: string;
  try {
    key = apiKeyOf(ctx, view, provider);
  } catch {
    throw new CredentialUnavailableError("api_key", "the provider's credential cannot be opened");
  }
  return ctx.credentials.header(provider.id, catalog, key);
}

/**
 * Which token endpoints other than the vendors' own a key may name (a service-account key's
 * token_uri, an Entra ID authority_host): the proxy posts a signed grant there. With private
 * upstreams not refused, any; else only one AGN_ALLOWED_PRIVATE_UPSTREAMS names (a local test
 * endpoint), as docs/API.md says: a public address is not enough, and no name is resolved.
 */
export function tokenEndpointAllowance(
  allowance: PrivateUpstreamAllowance | undefined,
): (url: URL) => boolean {
  return (url) => {
    if (!allowance) return true;
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return allowanceNames({ host, port, address: host }, allowance);
  };
}
