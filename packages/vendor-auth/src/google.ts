import { JWT } from "google-auth-library";
import type { ServiceAccountKey } from "./keys";

export const GOOGLE_CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Where google-auth-library sends every JWT bearer grant, whatever the key's token_uri says. */
const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

export interface MintedToken {
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * An access token for a service account (RFC 7523 JWT bearer grant, scope cloud-platform), from
 * a fresh client each time so no token is cached anywhere but in `VendorCredentials`.
 * google-auth-library 11 posts to oauth2.googleapis.com and signs for that audience whatever the
 * key's `token_uri` names; a key naming another endpoint (a local one in tests, another universe)
 * gets its grant sent there, and signed for it, through the client's own transporter hook.
 */
export async function mintGoogleToken(account: ServiceAccountKey, timeoutMs: number): Promise<MintedToken> {
  const tokenUri = account.token_uri;
  const client = new JWT({
    email: account.client_email,
    key: account.private_key,
    keyId: account.private_key_id,
    scopes: [GOOGLE_CLOUD_PLATFORM_SCOPE],
    additionalClaims: tokenUri === GOOGLE_TOKEN_URL ? undefined : { aud: tokenUri },
    transporterOptions: { timeout: timeoutMs },
  });
  if (tokenUri !== GOOGLE_TOKEN_URL) {
    client.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  const tokens = await client.authorize();
  if (!tokens.access_token) throw new Error("the token endpoint answered without an access_token");
  return {
    token: tokens.access_token,
    // Google's tokens last an hour; an answer without expires_in is taken as five minutes.
    expiresAt:
      tokens.expiry_date && tokens.expiry_date > Date.now() ? tokens.expiry_date : Date.now() + 300_000,
  };
}
