import type { Wire } from "../wires";

/**
 * What of a caller's request reaches the vendor besides its body: only what the vendor needs to
 * serve it, the headers and query parameters its wire names (`Wire.forwardedHeaders`,
 * `forwardedQuery`). The vendor bills the provider's key, so a caller must not choose anything
 * that key's owner decides: which organization or project pays (`OpenAI-Organization`,
 * `OpenAI-Project`, `x-goog-user-project`), the caller's cookies or forwarding chain (`Cookie`,
 * `X-Forwarded-For`, `Forwarded`), or its own credentials. Everything not listed stays at the
 * proxy; the identity and auth headers the provider configures are added by the proxy.
 *
 * Every wire forwards `accept` (JSON or an event stream) and `user-agent` (the client's name and
 * version, which vendors read in support cases and carry no authority). Not forwarded though SDKs
 * send them: `x-stainless-*` (the SDK's runtime, OS and retry count: nothing a vendor serves by)
 * and agents' session headers (the proxy reads them for sessions).
 */
type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

const firstValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** The caller's headers the vendor of `wire` gets. */
function callerHeaders(wire: Wire, incoming: IncomingHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of wire.forwardedHeaders) {
    const value = firstValue(incoming[name]);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/**
 * Extra headers the catalog declares (`anthropic-version`, `OpenAI-Organization`, ...): the
 * provider's value, else the caller's where the wire forwards it, else the catalog default.
 */
export function catalogHeaders(
  wire: Wire,
  extra: readonly { name: string; default_value?: string }[],
  values: Readonly<Record<string, string>>,
  incoming: IncomingHeaders,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of extra) {
    const name = header.name.toLowerCase();
    const configured = Object.entries(values).find(([key]) => key.toLowerCase() === name)?.[1];
    const sent = wire.forwardedHeaders.has(name) ? firstValue(incoming[name]) : undefined;
    const value = configured ?? sent ?? header.default_value;
    if (value !== undefined && value !== "") headers[name] = value;
  }
  return headers;
}

/**
 * The headers of the upstream request: the caller's the wire forwards, then the proxy's own
 * (catalog, identity, auth, content type), which win. `accept-encoding: identity` so the answer's
 * usage can be read.
 */
export function upstreamHeaders(
  wire: Wire,
  incoming: IncomingHeaders,
  own: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers = callerHeaders(wire, incoming);
  headers["accept-encoding"] = "identity";
  for (const [name, value] of Object.entries(own)) headers[name.toLowerCase()] = value;
  return headers;
}

/**
 * What of the caller's `anthropic-beta` (comma-separated) the upstream accepts: Vertex refuses a
 * request naming a beta it does not know, and agents send new ones with each release, so only
 * the accepted ones pass; undefined when none is left (the header is dropped).
 */
export function acceptedBetas(value: string, accepted: readonly string[]): string | undefined {
  const kept = value
    .split(",")
    .map((beta) => beta.trim())
    .filter((beta) => beta !== "" && accepted.includes(beta));
  return kept.length > 0 ? kept.join(",") : undefined;
}
