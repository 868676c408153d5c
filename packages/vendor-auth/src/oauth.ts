import * as oauth from "openid-client";
import type { MintedToken } from "./google";

/** An OAuth 2.0 client credentials grant (RFC 6749 §4.4): where to post it, who asks, for what. */
export interface ClientCredentialsGrant {
  token_url: string;
  client_id: string;
  client_secret: string;
  /** Space-separated scopes; absent asks for the client's default. */
  scope?: string;
}

/** Lifetime assumed for a token answered without `expires_in` (RFC 6749 leaves it optional). */
const DEFAULT_LIFETIME_SECONDS = 3_600;

/** How a grant reaches its token endpoint: the caller's fetch, which applies the caller's rules of reach. */
export type TokenFetch = oauth.CustomFetch;

/**
 * An access token for `grant`, through openid-client: the client authenticates with HTTP Basic (the
 * method every RFC 6749 server supports). The grant goes through `fetch`, so where it may connect
 * (private addresses, TLS) is the caller's rule, as for the server the token is for; plain http is
 * sent as the admin configured it, like the server's own URL.
 */
export async function mintClientCredentialsToken(
  grant: ClientCredentialsGrant,
  fetch: TokenFetch,
  timeoutMs: number,
): Promise<MintedToken> {
  const url = new URL(grant.token_url);
  const config = new oauth.Configuration(
    { issuer: url.origin, token_endpoint: url.href },
    grant.client_id,
    undefined,
    oauth.ClientSecretBasic(grant.client_secret),
  );
  if (url.protocol === "http:") oauth.allowInsecureRequests(config);
  config[oauth.customFetch] = fetch;
  config.timeout = Math.max(1, Math.ceil(timeoutMs / 1000));
  const tokens = await oauth.clientCredentialsGrant(config, grant.scope ? { scope: grant.scope } : {});
  const lifetime = tokens.expires_in ?? DEFAULT_LIFETIME_SECONDS;
  return { token: tokens.access_token, expiresAt: Date.now() + lifetime * 1000 };
}
