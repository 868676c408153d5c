import type { CatalogEntry } from "@agentnet/catalog";
import { AppError, VERIFY_REFUSALS } from "@agentnet/contracts";
import { type AddressClass, firstNonPublic } from "@agentnet/gateway-rules";
import { CredentialUnavailableError, type UpstreamAuth, VendorCredentials } from "@agentnet/vendor-auth";
import { fetchListingPage, listingAuthority, type PinnedTarget, pinnedAgent } from "../dial/https";
import { resolveOnce } from "../dial/resolve";
import { type ListingTarget, withQuery } from "../domain/listing";
import { refusalForFailure, refusalForStatus } from "../domain/outcomes";
import { type ListedModel, parseListing } from "../domain/parsers";
import type { CheckContext } from "./context";

export type DialTarget = Extract<ListingTarget, { kind: "dial" }>;

export type ListingResult =
  /** The upstream resolves to an address the verifier will not dial; nothing was sent. */
  | { kind: "private"; host: string; address: string; cls: AddressClass }
  | { kind: "listed"; models: ListedModel[] };

/** A header value must not carry CR, LF or other control characters (no header smuggling). */
const isHeaderSafe = (value: string): boolean =>
  [...value].every((ch) => {
    const code = ch.charCodeAt(0);
    return code === 9 || (code >= 32 && code !== 127);
  });

/**
 * The credential of a listing call: the key through the catalog's template, a token minted from it
 * (a service-account key, Entra ID client credentials), minted afresh for each check so that
 * verifying proves the key still mints, or a signer (AWS access keys: each page is signed with
 * SigV4). A key that cannot mint is refused like one the vendor rejects.
 */
export async function listingAuth(
  ctx: CheckContext,
  entry: CatalogEntry,
  apiKey: string,
): Promise<UpstreamAuth> {
  try {
    return await new VendorCredentials(ctx.vendorCredentials).header("verify", entry, apiKey);
  } catch (error) {
    throw asRefusal(error);
  }
}

/**
 * Refuses (422), without minting or dialing anything, a key the gateway could never use: a JSON
 * credential that does not parse for the entry, that names a token endpoint grants may not go to,
 * or AWS access keys with no region to sign for at `upstreamUrl`. Checked whatever else a check
 * skips (`skip_tls_verification`, no listing endpoint), so no such key is stored.
 */
export function checkCredential(
  ctx: CheckContext,
  entry: CatalogEntry,
  apiKey: string,
  upstreamUrl?: string,
): void {
  try {
    new VendorCredentials(ctx.vendorCredentials).check(entry.id, apiKey, upstreamUrl);
  } catch (error) {
    throw asRefusal(error);
  }
}

const asRefusal = (error: unknown): unknown =>
  error instanceof CredentialUnavailableError
    ? new AppError(422, VERIFY_REFUSALS.rejectedCredential, error.message)
    : error;

/**
 * The request headers of a listing call: the credential header and the catalog's extra headers,
 * each with the provider's value or else the catalog default. Only headers the catalog declares are
 * sent. A signer adds its headers to each page (`pageHeaders`).
 */
export function listingHeaders(
  entry: CatalogEntry,
  auth: UpstreamAuth,
  extraValues: Readonly<Record<string, string>> = {},
): Record<string, string> {
  if (auth.value !== undefined && !isHeaderSafe(auth.value)) {
    throw new AppError(400, "bad_request", "the API key contains characters an HTTP header cannot carry");
  }
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": "agentnet-provider-verifier",
  };
  for (const extra of entry.extra_headers) {
    const value = extraValues[extra.name] ?? extra.default_value;
    if (value === undefined) continue;
    if (!isHeaderSafe(value)) {
      throw new AppError(
        400,
        "bad_request",
        `the value of ${extra.name} contains characters an HTTP header cannot carry`,
      );
    }
    headers[extra.name.toLowerCase()] = value;
  }
  if (auth.sign === undefined) headers[auth.name] = auth.value;
  return headers;
}

/** The headers of one listing page: a signer's signature for exactly that request added. */
async function pageHeaders(
  auth: UpstreamAuth,
  target: PinnedTarget,
  path: string,
  headers: Record<string, string>,
): Promise<Record<string, string>> {
  if (auth.sign === undefined) return headers;
  const url = new URL(`https://${listingAuthority(target)}${path}`);
  try {
    return { ...headers, ...(await auth.sign({ method: "GET", url, headers, body: "" })) };
  } catch (error) {
    throw asRefusal(error);
  }
}

/**
 * Resolves the upstream once, refuses to dial non-public addresses, then GETs the listing
 * (following the vendor's pagination up to `pages` pages) through an agent pinned to the
 * resolved address. Any refusal is thrown as the AppError the operator sees.
 */
export async function listModels(
  ctx: CheckContext,
  entry: CatalogEntry,
  target: DialTarget,
  apiKey: string,
  pages: number,
  extraValues: Readonly<Record<string, string>> = {},
): Promise<ListingResult> {
  const signal = AbortSignal.timeout(ctx.dial.timeoutMs);
  const resolved = await resolveOnce(ctx.resolve, target.host, signal, ctx.dial.timeoutMs);
  if (!resolved.ok) throw refusalForFailure(resolved.failure);
  const blocked = firstNonPublic(resolved.addresses.map((a) => a.address));
  if (blocked && !ctx.allowPrivateHosts.has(target.host))
    return { kind: "private", host: target.host, ...blocked };
  // Only for an upstream it will dial: a key's grant is sent nowhere for one it will not.
  const auth = await listingAuth(ctx, entry, apiKey);
  const headers = listingHeaders(entry, auth, extraValues);

  const [first] = resolved.addresses;
  if (first === undefined)
    throw refusalForFailure({ kind: "unresolvable", host: target.host, code: "ENODATA" });
  const pinned = { host: target.host, port: target.port, resolved: first };
  const agent = pinnedAgent(pinned, ctx.dial);
  try {
    const models: ListedModel[] = [];
    for (const start of [target.path, ...(target.morePaths ?? [])]) {
      let path = start;
      for (let page = 1; page <= pages; page++) {
        const sent = await pageHeaders(auth, pinned, path, headers);
        const fetched = await fetchListingPage(agent, pinned, path, sent, ctx.dial, signal);
        if (!fetched.ok) throw refusalForFailure(fetched.failure);
        const refusal = refusalForStatus(fetched.status, target.host);
        if (refusal) throw refusal;
        const parsed = parseListing(target.shape, fetched.body);
        if (!parsed.ok) throw refusalForFailure({ kind: "bad_shape", host: target.host, why: parsed.why });
        models.push(...parsed.page.models);
        if (parsed.page.next === undefined) break;
        if (page === pages && pages > 1) {
          ctx.logger.warn({ host: target.host, pages }, "listing has more pages than the verifier reads");
        }
        path = withQuery(start, parsed.page.next);
      }
    }
    return { kind: "listed", models };
  } finally {
    // Closing in the background: a slow vendor must not hold the reply back.
    void agent.destroy().catch(() => undefined);
  }
}
