import { type AddressClass, classifyAddress, parseIPv4, parseIPv6 } from "./address";

/**
 * Which addresses agentnet connects to for a URL an account admin wrote (a provider's upstream,
 * which the gateway proxy forwards to; a webhook, which the control-plane posts alerts to): public
 * ones (the rule of `classifyAddress`, which the provider-verifier applies too), and private ones
 * only where the operator allowed them (`AGN_ALLOWED_PRIVATE_UPSTREAMS` for self-hosted models,
 * `AGN_ALLOWED_PRIVATE_WEBHOOKS` for receivers on the operator's network). Without this an admin
 * could make agentnet POST to the host's own API, to the cloud's metadata service or anywhere on
 * the operator's network.
 *
 * An allowance entry is one of:
 * - a range, `10.0.0.0/8` or `fd00::/8` (a bare address is a range of one): any port in it;
 * - an address and port, `127.0.0.1:8091` or `[::1]:8000`: that address, that port;
 * - a name and port, `llm.lan:8000`: an upstream written with that name and port, whatever its
 *   name resolves to (the operator vouches for that name's DNS).
 * Addresses compare as IPv6, an IPv4 address as its IPv4-mapped form, so `127.0.0.1` and
 * `::ffff:127.0.0.1` are one address.
 */
export type PrivateUpstreamAllowance = readonly AllowedPrivateUpstream[];

type AllowedPrivateUpstream =
  | { kind: "range"; network: bigint; prefix: number }
  | { kind: "address"; address: bigint; port: number }
  | { kind: "name"; name: string; port: number };

/** Where a connection is about to go: the URL's host and port as written, and one address. */
export interface UpstreamConnection {
  host: string;
  port: number;
  address: string;
}

const IPV4_MAPPED = 0xffff_0000_0000n;
const NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** An address as a 128-bit number, IPv4 in its IPv4-mapped form; undefined when it is none. */
function addressValue(text: string): bigint | undefined {
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return IPV4_MAPPED | BigInt(v4);
  return parseIPv6(text);
}

const hostName = (host: string) => host.toLowerCase().replace(/\.$/, "");

function portOf(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

function parseEntry(entry: string): AllowedPrivateUpstream | undefined {
  const slash = entry.indexOf("/");
  if (slash !== -1) {
    const base = entry.slice(0, slash);
    const bits = entry.slice(slash + 1);
    const network = addressValue(base);
    if (network === undefined || !/^[0-9]{1,3}$/.test(bits)) return undefined;
    const prefix = Number(bits) + (parseIPv4(base) !== undefined ? 96 : 0);
    return prefix <= 128 ? { kind: "range", network, prefix } : undefined;
  }
  const single = addressValue(entry);
  if (single !== undefined) return { kind: "range", network: single, prefix: 128 };
  const endpoint = /^\[([^\]]+)\]:([^:]+)$/.exec(entry) ?? /^([^:[\]]+):([^:]+)$/.exec(entry);
  const bracketed = entry.startsWith("[");
  const host = endpoint?.[1];
  const port = portOf(endpoint?.[2] ?? "");
  if (host === undefined || port === undefined) return undefined;
  const address = addressValue(host);
  if (address !== undefined) return { kind: "address", address, port };
  const name = hostName(host);
  return !bracketed && NAME.test(name) ? { kind: "name", name, port } : undefined;
}

/** Reads the allowance; every entry it cannot read is a problem, named in the error. */
export function parsePrivateUpstreamAllowance(entries: readonly string[]): {
  allowance: PrivateUpstreamAllowance;
  problems: string[];
} {
  const allowance: AllowedPrivateUpstream[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const parsed = parseEntry(entry.trim());
    if (parsed) allowance.push(parsed);
    else
      problems.push(
        `"${entry}" is none of a range (10.0.0.0/8), an address (10.1.2.3) or a host and port (127.0.0.1:8091, [::1]:8000, llm.lan:8000)`,
      );
  }
  return { allowance, problems };
}

const inRange = (value: bigint, network: bigint, prefix: number) => {
  const shift = BigInt(128 - prefix);
  return value >> shift === network >> shift;
};

function allows(entry: AllowedPrivateUpstream, connection: UpstreamConnection, address: bigint): boolean {
  switch (entry.kind) {
    case "range":
      return inRange(address, entry.network, entry.prefix);
    case "address":
      return entry.address === address && entry.port === connection.port;
    case "name":
      return entry.name === hostName(connection.host) && entry.port === connection.port;
  }
}

/**
 * Why this connection must not be made (the class of its non-public address), or undefined when it
 * may: the address is public, or the allowance covers it.
 */
export function privateUpstreamRefusal(
  connection: UpstreamConnection,
  allowance: PrivateUpstreamAllowance,
): AddressClass | undefined {
  const cls = classifyAddress(connection.address);
  if (cls === "public") return undefined;
  const address = addressValue(connection.address);
  if (address !== undefined && allowance.some((entry) => allows(entry, connection, address)))
    return undefined;
  return cls;
}

/**
 * Whether the allowance names this endpoint itself (its range, its address and port, or its host
 * name and port), public or not: where a rule admits only what the operator listed, such as the
 * token endpoints a credential may name. A host name is matched as written, never resolved.
 */
export function allowanceNames(connection: UpstreamConnection, allowance: PrivateUpstreamAllowance): boolean {
  const address = addressValue(connection.address);
  return allowance.some((entry) =>
    entry.kind === "name"
      ? allows(entry, connection, 0n)
      : address !== undefined && allows(entry, connection, address),
  );
}
