import type { CatalogListing } from "@agentnet/contracts";
import { parseIPv6 } from "@agentnet/gateway-rules";

/**
 * Where a provider's models are listed. The spec: only the host (and, here, the port) of
 * upstream_url is used; the listing is always HTTPS at the catalog's path. A configured scheme or
 * path is neither used nor validated, except that a path may supply a `{name}` placeholder value.
 */
export type ListingTarget =
  /** The catalog entry declares no listing endpoint (custom). */
  | { kind: "no_listing" }
  /** upstream_url has no usable host, or the listing path needs a value the URL lacks. */
  | { kind: "no_host"; why: string }
  /** A control-plane listing host (Cloudflare): resolved, never contacted. */
  | { kind: "resolve_only"; host: string }
  /** Dial `host:port` over HTTPS and GET `path` (then `morePaths`, for discovery). */
  | {
      kind: "dial";
      host: string;
      port: number;
      path: string;
      /** Present only when the catalog lists more paths (Bedrock's inference profiles). */
      morePaths?: string[];
      shape: CatalogListing["shape"];
    };

export const HTTPS_PORT = 443;

/** A DNS name of letters, digits and hyphens in dot-separated labels, or a bracket-free IP. */
const HOSTNAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

export interface UpstreamHost {
  /** Without IPv6 brackets, lower case, no trailing dot. */
  host: string;
  /** The explicit port of upstream_url, else 443: only host and port carry over to the listing. */
  port: number;
  url: URL;
}

/** The host and port of an upstream_url, or undefined when it has none to derive a listing from. */
export function upstreamHost(upstreamUrl: string): UpstreamHost | undefined {
  let url: URL;
  try {
    url = new URL(upstreamUrl.trim());
  } catch {
    return undefined;
  }
  const raw = url.hostname.toLowerCase();
  if (raw === "") return undefined;
  const bracketed = raw.startsWith("[") && raw.endsWith("]");
  const host = bracketed ? raw.slice(1, -1) : raw.replace(/\.$/, "");
  // WHATWG URL keeps characters like `{` in non-special schemes' hosts: an unfilled
  // `{resource}.openai.azure.com` copied from the catalog is not a host.
  if (bracketed ? parseIPv6(host) === undefined : !HOSTNAME.test(host)) return undefined;
  const port = url.port === "" ? HTTPS_PORT : Number(url.port);
  return { host, port, url };
}

/** Path segments following `marker` in the upstream path, e.g. `/projects/<p>` → p. */
const segmentAfter = (segments: readonly string[], marker: string): string | undefined => {
  const index = segments.indexOf(marker);
  return index >= 0 ? segments[index + 1] : undefined;
};

/**
 * Values a listing path's `{name}` placeholders can take, read from upstream_url:
 * - `account_id`: Cloudflare AI Gateway, `/v1/{account_id}/{gateway_id}/...`;
 * - `project`, `location` (alias `region`): Vertex, `/v1/projects/{p}/locations/{l}/...`, the
 *   region falling back to the `{region}-aiplatform.googleapis.com` host;
 * - `resource`: Azure, the first label of `{resource}.openai.azure.com`;
 * - `deployment`: Azure, `/openai/deployments/{deployment}/...`.
 */
export function placeholderValues(upstream: UpstreamHost): Record<string, string | undefined> {
  const segments = upstream.url.pathname
    .split("/")
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const regionFromHost = /^([a-z0-9-]+)-aiplatform\.googleapis\.com$/.exec(upstream.host)?.[1];
  const location = segmentAfter(segments, "locations") ?? regionFromHost;
  return {
    account_id: segmentAfter(segments, "v1"),
    project: segmentAfter(segments, "projects"),
    location,
    region: location,
    resource: /^([a-z0-9-]+)\.openai\.azure\.com$/.exec(upstream.host)?.[1],
    deployment: segmentAfter(segments, "deployments"),
  };
}

/** Fills `{name}` placeholders of a catalog listing path; names the first one it cannot fill. */
export function fillListingPath(
  path: string,
  upstream: UpstreamHost,
): { ok: true; path: string } | { ok: false; missing: string } {
  const values = placeholderValues(upstream);
  let missing: string | undefined;
  const filled = path.replace(/\{([a-z_]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined || value === "") {
      missing ??= name;
      return "";
    }
    return encodeURIComponent(value);
  });
  return missing === undefined ? { ok: true, path: filled } : { ok: false, missing };
}

/**
 * The host a listing is requested on: the upstream's, except that Bedrock's runtime host
 * (`bedrock-runtime[-fips].{region}.amazonaws.com[.cn]`) has its models listed by the control plane
 * of the same region (`bedrock[-fips].{region}.amazonaws.com[.cn]`). Any other Bedrock upstream (a
 * local test vendor, a gateway in front of Bedrock) serves the listing on its own host; a VPC
 * endpoint resolves to private addresses, so such a provider is stored unverified anyway.
 */
export function listingHost(shape: CatalogListing["shape"], host: string): string {
  if (shape !== "bedrock_models") return host;
  const runtime = /^bedrock-runtime(-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(host);
  if (!runtime) return host;
  return `bedrock${runtime[1] ?? ""}.${runtime[2]}.amazonaws.com${runtime[3] ?? ""}`;
}

/** Decides where (and whether) a provider's listing is requested, from catalog data only. */
export function deriveListingTarget(listing: CatalogListing | null, upstreamUrl: string): ListingTarget {
  if (listing === null) return { kind: "no_listing" };
  const upstream = upstreamHost(upstreamUrl);
  if (upstream === undefined) return { kind: "no_host", why: "upstream_url has no host" };
  // The path of a control-plane listing is never requested, so its placeholders need no value.
  if (listing.host !== undefined) return { kind: "resolve_only", host: listing.host };
  const paths: string[] = [];
  for (const path of [listing.path, ...(listing.more_paths ?? [])]) {
    const filled = fillListingPath(path, upstream);
    if (!filled.ok) {
      return { kind: "no_host", why: `upstream_url does not say the listing's {${filled.missing}}` };
    }
    paths.push(filled.path);
  }
  const [path = listing.path, ...rest] = paths;
  return {
    kind: "dial",
    host: listingHost(listing.shape, upstream.host),
    port: upstream.port,
    path,
    ...(rest.length > 0 ? { morePaths: rest } : {}),
    shape: listing.shape,
  };
}

/** Adds pagination parameters to a listing path that may already carry a query (Azure's api-version). */
export function withQuery(path: string, params: Record<string, string>): string {
  const url = new URL(path, "https://listing.invalid");
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}
