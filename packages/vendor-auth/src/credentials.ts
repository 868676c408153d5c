import { createHash } from "node:crypto";
import { renderAuthHeader } from "@agentnet/contracts";
import { awsRequestSigner, type RequestSigner, type SignableRequest, signingRegion } from "./aws";
import { mintEntraToken } from "./entra";
import { type MintedToken, mintGoogleToken } from "./google";
import {
  type CredentialKind,
  isJsonKey,
  parseAwsAccessKey,
  parseEntraClientSecret,
  parseServiceAccountKey,
} from "./keys";
import { type ClientCredentialsGrant, mintClientCredentialsToken, type TokenFetch } from "./oauth";

export type { RequestSigner, SignableRequest };

/**
 * The credential of one upstream request: a header (`name` lower case, as the proxy sends headers),
 * or, for AWS access keys, a signer the request is passed through once its URL, headers and body
 * are final; it answers the headers to add (authorization, x-amz-date, x-amz-content-sha256,
 * x-amz-security-token) and rejects with `CredentialUnavailableError`.
 */
export type UpstreamAuth =
  | { name: string; value: string; sign?: undefined }
  | { sign: RequestSigner; name?: undefined; value?: undefined };

/** What of a catalog entry decides its credential header (a `CatalogEntry` or `CatalogProvider` fits). */
export interface CatalogAuth {
  id: string;
  /** Absent means Authorization. */
  auth_header_name?: string;
  auth_header_template: string;
}

/** What a token is minted or a request signed from: a provider's kind of key, or an MCP server's grant. */
export type ExchangedKind = CredentialKind | "oauth_client_credentials";

/** A token the proxy could not mint: the proxy answers 502 `provider.credential_unavailable`. */
export class CredentialUnavailableError extends Error {
  readonly code = "provider.credential_unavailable";
  constructor(
    readonly kind: ExchangedKind,
    message: string,
  ) {
    super(message);
    this.name = "CredentialUnavailableError";
  }
}

export interface VendorCredentialsOptions {
  /** Refresh in the background once a token has less than this left. Default 5 minutes. */
  refreshBeforeMs?: number;
  /** A token with less than this left is not sent (it could expire on the way). Default 30 s. */
  expiryMarginMs?: number;
  /** After a failed mint, requests fail at once for this long instead of each calling the endpoint. Default 2 s. */
  retryAfterFailureMs?: number;
  /** Timeout of one token request. Default 10 s. */
  mintTimeoutMs?: number;
  /** An extra CA (PEM) trusted for Entra ID authorities (a local test authority's). */
  trustedCa?: string;
  /**
   * Whether the proxy may post grants to a token endpoint (a service-account key's token_uri, an Entra
   * authority host) that is not the vendor's own (`VENDOR_TOKEN_HOSTS`). Default: none is; a key
   * could otherwise point the proxy at an internal address. Local test endpoints are allowed here.
   */
  isTokenEndpointAllowed?: (url: URL) => boolean;
  /** Told of a background refresh that failed (the token in hand is still served). Never given a secret. */
  onRefreshFailure?: (providerId: string, error: CredentialUnavailableError) => void;
}

interface Exchange {
  fingerprint: string;
  kind: ExchangedKind;
  mint: () => Promise<MintedToken>;
  current?: MintedToken;
  inflight?: Promise<MintedToken>;
  failedAt?: number;
  failure?: CredentialUnavailableError;
  signs?: undefined;
}

/** AWS access keys: nothing to mint, every request is signed (its signing keys cached per day and region). */
interface Signing {
  fingerprint: string;
  kind: "aws_access_key";
  signs: { sign: RequestSigner };
}

type Kept = Exchange | Signing;

const AUTHORIZATION = "authorization";

/** Providers whose tokens are kept at once: far above any deployment's exchanged keys. */
const MAX_EXCHANGES = 10_000;

/**
 * Where a key may have grants sent (a service-account key's `token_uri`, an Entra ID
 * `authority_host`), for the verifier and the proxy alike: a vendor's own token host over https on
 * its standard port, or an endpoint the operator allows (`operatorAllows`: local test endpoints).
 */
export function tokenEndpointAllowed(url: URL, operatorAllows?: (url: URL) => boolean): boolean {
  if (url.protocol === "https:" && url.port === "" && VENDOR_TOKEN_HOSTS.has(url.hostname)) return true;
  return operatorAllows?.(url) === true;
}

/** The vendors' own token endpoints: Google's, and Entra ID's public and sovereign clouds. */
export const VENDOR_TOKEN_HOSTS: ReadonlySet<string> = new Set([
  "oauth2.googleapis.com",
  "login.microsoftonline.com",
  "login.microsoftonline.us",
  "login.chinacloudapi.cn",
  "login.partner.microsoftonline.cn",
  "login.microsoftonline.de",
]);

/**
 * The credential header for each upstream request. A plain key (or a bare access token) fills the
 * catalog's auth header template, synchronously. A key exchanged for tokens (a Google
 * service-account key, Entra ID client credentials) is kept per provider and key fingerprint, so a
 * rotated key mints anew; a cached token is answered synchronously, refreshed in the background
 * once less than `refreshBeforeMs` is left, and awaited only when none is valid; concurrent
 * requests share one mint. AWS access keys answer a signer, kept the same way. Neither tokens nor
 * keys are logged or stored anywhere else.
 */
export class VendorCredentials {
  private readonly exchanges = new Map<string, Kept>();
  private readonly refreshBeforeMs: number;
  private readonly expiryMarginMs: number;
  private readonly retryAfterFailureMs: number;
  private readonly mintTimeoutMs: number;

  constructor(private readonly options: VendorCredentialsOptions = {}) {
    this.refreshBeforeMs = options.refreshBeforeMs ?? 300_000;
    this.expiryMarginMs = options.expiryMarginMs ?? 30_000;
    this.retryAfterFailureMs = options.retryAfterFailureMs ?? 2_000;
    this.mintTimeoutMs = options.mintTimeoutMs ?? 10_000;
  }

  /**
   * The credential for provider `providerId` of catalog entry `catalog` whose stored key is `key`:
   * a header, or for AWS access keys `{ sign }` (always synchronous; the region is read from each
   * signed request's URL, `src/aws.ts`). Synchronous for a plain key or a valid cached token; a
   * promise while a token is minted. Throws (or the promise rejects with) `CredentialUnavailableError`.
   */
  header(providerId: string, catalog: CatalogAuth, key: string): UpstreamAuth | Promise<UpstreamAuth> {
    if (!isJsonKey(key)) {
      return {
        name: (catalog.auth_header_name ?? "Authorization").toLowerCase(),
        value: renderAuthHeader(catalog.auth_header_template, key),
      };
    }
    const exchange = this.exchangeFor(providerId, catalog.id, key);
    if (exchange.signs) return exchange.signs;
    return this.bearerOf(providerId, exchange);
  }

  /**
   * A bearer token from an OAuth 2.0 client credentials grant for `ownerId` (an MCP server),
   * minted, kept and refreshed as providers' tokens are (a changed grant mints anew). The grant is
   * posted through `fetch`: the caller's rules of reach apply to the token endpoint as to the
   * server it is for (an admin's configuration, not a member's key).
   */
  clientCredentials(
    ownerId: string,
    grant: ClientCredentialsGrant,
    fetch: TokenFetch,
  ): UpstreamAuth | Promise<UpstreamAuth> {
    const exchange = this.keep(ownerId, JSON.stringify(grant), (fingerprint) => ({
      fingerprint,
      kind: "oauth_client_credentials",
      mint: () => mintClientCredentialsToken(grant, fetch, this.mintTimeoutMs),
    }));
    if (exchange.signs) return exchange.signs;
    return this.bearerOf(ownerId, exchange);
  }

  /** The exchange's token: synchronous while a valid one is kept, else a promise of a new one. */
  private bearerOf(ownerId: string, exchange: Exchange): UpstreamAuth | Promise<UpstreamAuth> {
    const now = Date.now();
    const current = exchange.current;
    if (current && current.expiresAt - now > this.expiryMarginMs) {
      if (current.expiresAt - now < this.refreshBeforeMs) this.refreshInBackground(ownerId, exchange, now);
      return bearer(current.token);
    }
    if (
      exchange.failure &&
      exchange.failedAt !== undefined &&
      now - exchange.failedAt < this.retryAfterFailureMs
    ) {
      throw exchange.failure;
    }
    return this.minted(exchange).then((token) => bearer(token.token));
  }

  /**
   * Checks, without minting anything, that `key` is usable with catalog entry `catalogId`: a plain
   * key always is; a JSON credential must parse and name a token endpoint grants may go to
   * (`tokenEndpointAllowed`); AWS access keys must have a region to sign for at `upstreamUrl`, when
   * given (its host's, else the key's). Throws `CredentialUnavailableError` as `header` would.
   */
  check(catalogId: string, key: string, upstreamUrl?: string): void {
    if (!isJsonKey(key)) return;
    const kept = this.newExchange(catalogId, key, "");
    if (kept.kind !== "aws_access_key" || upstreamUrl === undefined || !URL.canParse(upstreamUrl)) return;
    const keys = parseAwsAccessKey(key);
    if (typeof keys === "string") return; // newExchange has refused it already
    const target = signingRegion(new URL(upstreamUrl), keys);
    if ("problem" in target) throw unusableKey("aws_access_key", target.problem);
  }

  /** Drop what is kept for a provider (deleted, or its key replaced by a plain one). */
  forget(providerId: string): void {
    this.exchanges.delete(providerId);
  }

  private exchangeFor(providerId: string, catalogId: string, key: string): Kept {
    return this.keep(providerId, `${catalogId}\0${key}`, (fingerprint) =>
      this.newExchange(catalogId, key, fingerprint),
    );
  }

  /** What is kept for `ownerId` when it was made from the same `source`, else a new one made by `make`. */
  private keep(ownerId: string, source: string, make: (fingerprint: string) => Kept): Kept {
    const fingerprint = createHash("sha256").update(source).digest("base64url");
    const known = this.exchanges.get(ownerId);
    if (known?.fingerprint === fingerprint) return known;
    const exchange = make(fingerprint);
    // Owners come and go (a deleted one is never asked for again): the oldest is let go.
    this.exchanges.delete(ownerId);
    if (this.exchanges.size >= MAX_EXCHANGES) {
      const oldest = this.exchanges.keys().next().value;
      if (oldest !== undefined) this.exchanges.delete(oldest);
    }
    this.exchanges.set(ownerId, exchange);
    return exchange;
  }

  private newExchange(catalogId: string, key: string, fingerprint: string): Kept {
    if (catalogId === "vertex_api") {
      const account = parseServiceAccountKey(key);
      if (typeof account === "string") throw unusableKey("service_account", account);
      this.checkTokenEndpoint("service_account", account.token_uri);
      return {
        fingerprint,
        kind: "service_account",
        mint: () => mintGoogleToken(account, this.mintTimeoutMs),
      };
    }
    if (catalogId === "azure_api") {
      const client = parseEntraClientSecret(key);
      if (typeof client === "string") throw unusableKey("entra_client_secret", client);
      if (client.authority_host) this.checkTokenEndpoint("entra_client_secret", client.authority_host);
      const options = { timeoutMs: this.mintTimeoutMs, trustedCa: this.options.trustedCa };
      return { fingerprint, kind: "entra_client_secret", mint: () => mintEntraToken(client, options) };
    }
    if (catalogId === "bedrock_api") {
      const keys = parseAwsAccessKey(key);
      if (typeof keys === "string") throw unusableKey("aws_access_key", keys);
      const sign = awsRequestSigner(keys);
      return {
        fingerprint,
        kind: "aws_access_key",
        signs: {
          sign: (request) =>
            sign(request).catch((error: unknown) => {
              throw unusableKey("aws_access_key", error instanceof Error ? error.message : "signing failed");
            }),
        },
      };
    }
    throw unusableKey("api_key", `${catalogId} takes an API key, not a JSON credential`);
  }

  private checkTokenEndpoint(kind: ExchangedKind, endpoint: string): void {
    if (tokenEndpointAllowed(new URL(endpoint), this.options.isTokenEndpointAllowed)) return;
    // Not naming it: a member's request can end with this message, and the endpoint is the admin's.
    throw unusableKey(kind, "this gateway does not send grants to the token endpoint the key names");
  }

  /** The mint under way, or a new one: concurrent callers share it. */
  private minted(exchange: Exchange): Promise<MintedToken> {
    if (exchange.inflight) return exchange.inflight;
    const inflight = exchange.mint().then(
      (token) => {
        exchange.current = token;
        exchange.failure = undefined;
        exchange.failedAt = undefined;
        exchange.inflight = undefined;
        return token;
      },
      (error: unknown) => {
        const failure = new CredentialUnavailableError(exchange.kind, mintFailure(exchange.kind, error));
        exchange.failure = failure;
        exchange.failedAt = Date.now();
        exchange.inflight = undefined;
        throw failure;
      },
    );
    exchange.inflight = inflight;
    return inflight;
  }

  private refreshInBackground(providerId: string, exchange: Exchange, now: number): void {
    if (exchange.inflight) return;
    if (exchange.failedAt !== undefined && now - exchange.failedAt < this.retryAfterFailureMs) return;
    this.minted(exchange).catch((error: CredentialUnavailableError) => {
      this.options.onRefreshFailure?.(providerId, error);
    });
  }
}

const bearer = (token: string): UpstreamAuth => ({ name: AUTHORIZATION, value: `Bearer ${token}` });

function unusableKey(kind: ExchangedKind, problem: string): CredentialUnavailableError {
  return new CredentialUnavailableError(kind, `the provider's key cannot be used: ${problem}`);
}

/**
 * What went wrong, for a log line and an error body: the endpoint's error code and description,
 * never the request (its signed grant is a credential) nor the cause object that carries it.
 */
const MINTED: Partial<Record<ExchangedKind, string>> = {
  service_account: "Google access token",
  entra_client_secret: "Entra ID token",
  oauth_client_credentials: "OAuth access token",
};

function mintFailure(kind: ExchangedKind, error: unknown): string {
  const what = MINTED[kind] ?? "token";
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = (message.split("\n")[0] ?? "").slice(0, 300);
  return `the ${what} could not be minted: ${firstLine}`;
}
