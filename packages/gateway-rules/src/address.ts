/**
 * Which addresses a request to a provider's `upstream_url` may reach. Only globally routable
 * unicast addresses are public; everything else (RFC 6890 special-purpose ranges) is refused, so
 * an account admin's upstream URL can never make agentnet reach into its own network. The
 * provider-verifier applies it before it dials a listing, the gateway proxy on every connection
 * it opens upstream: one rule, so the two never disagree on what "private" means.
 *
 * Parsing is done here rather than with node:net so the rule stays a plain, testable function.
 */

export type AddressClass =
  | "public"
  | "private"
  | "loopback"
  | "link_local"
  | "cgnat"
  | "multicast"
  | "unspecified"
  | "documentation"
  | "reserved"
  | "invalid";

type V4Range = readonly [base: string, prefix: number, cls: Exclude<AddressClass, "public">];

const V4_SPECIAL: readonly V4Range[] = [
  ["0.0.0.0", 8, "unspecified"], // "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link_local"], // includes cloud metadata endpoints (169.254.169.254)
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"], // IETF protocol assignments
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"], // deprecated 6to4 relay anycast
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"], // benchmarking
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"], // future use, and 255.255.255.255 broadcast
];

/** Strict dotted-quad (what resolvers return and WHATWG URL normalises to) as an unsigned int. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

const v4InRange = (value: number, base: string, prefix: number): boolean => {
  const baseValue = parseIPv4(base) ?? 0;
  const size = 2 ** (32 - prefix);
  return Math.floor(value / size) === Math.floor(baseValue / size);
};

const classifyV4Value = (value: number): AddressClass => {
  for (const [base, prefix, cls] of V4_SPECIAL) if (v4InRange(value, base, prefix)) return cls;
  return "public";
};

/** An IPv6 address (optionally with an embedded dotted quad and a zone id) as a 128-bit integer. */
export function parseIPv6(text: string): bigint | undefined {
  const address = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!address.includes(":")) return undefined;
  let groups = address;
  const lastColon = address.lastIndexOf(":");
  const last = address.slice(lastColon + 1);
  if (last.includes(".")) {
    // An embedded dotted quad (::ffff:1.2.3.4) is the last two groups written in decimal.
    const v4 = parseIPv4(last);
    if (v4 === undefined) return undefined;
    const high = Math.floor(v4 / 65536).toString(16);
    const low = (v4 % 65536).toString(16);
    groups = `${address.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = groups.split("::");
  if (halves.length > 2) return undefined;
  const parseGroups = (part: string | undefined): number[] | undefined => {
    if (part === undefined || part === "") return [];
    const out: number[] = [];
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
      out.push(Number.parseInt(group, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0]);
  const rest = parseGroups(halves[1]);
  if (head === undefined || rest === undefined) return undefined;
  const known = head.length + rest.length;
  let all: number[] = head;
  if (halves.length === 2) {
    if (known > 7) return undefined;
    all = [...head, ...new Array<number>(8 - known).fill(0), ...rest];
  }
  if (all.length !== 8) return undefined;
  return all.reduce((acc, group) => (acc << 16n) | BigInt(group), 0n);
}

type V6Range = readonly [base: string, prefix: number, cls: Exclude<AddressClass, "public"> | "embedded_v4"];

/** Checked in order; the first match wins, so more specific ranges come first. */
const V6_SPECIAL: readonly V6Range[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "embedded_v4"], // IPv4-mapped: the socket really talks IPv4
  ["64:ff9b::", 96, "embedded_v4"], // NAT64 well-known prefix: the translator dials the IPv4
  ["64:ff9b:1::", 48, "private"], // local-use NAT64
  ["::ffff:0:0:0", 96, "reserved"], // IPv4-translated
  ["::", 96, "reserved"], // deprecated IPv4-compatible
  ["100::", 64, "reserved"], // discard-only
  ["2001:db8::", 32, "documentation"],
  ["2001::", 23, "reserved"], // IETF protocol assignments, incl. Teredo tunnels
  ["2002::", 16, "reserved"], // 6to4 tunnels could relay to any IPv4, private ones included
  ["3fff::", 20, "documentation"],
  ["5f00::", 16, "reserved"], // SRv6 SIDs
  ["fc00::", 7, "private"], // unique local
  ["fe80::", 10, "link_local"],
  ["fec0::", 10, "private"], // deprecated site-local
  ["ff00::", 8, "multicast"],
];

const v6InRange = (value: bigint, base: string, prefix: number): boolean => {
  const shift = BigInt(128 - prefix);
  return value >> shift === (parseIPv6(base) ?? 0n) >> shift;
};

const classifyV6Value = (value: bigint): AddressClass => {
  for (const [base, prefix, cls] of V6_SPECIAL) {
    if (!v6InRange(value, base, prefix)) continue;
    return cls === "embedded_v4" ? classifyV4Value(Number(value & 0xffffffffn)) : cls;
  }
  // Only 2000::/3 is allocated as global unicast; anything outside it is not dialable.
  return v6InRange(value, "2000::", 3) ? "public" : "reserved";
};

/** What kind of address a resolved (or literal) IP is. */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== undefined) return classifyV4Value(v4);
  const v6 = parseIPv6(ip);
  if (v6 !== undefined) return classifyV6Value(v6);
  return "invalid";
}

export const isPublicAddress = (ip: string): boolean => classifyAddress(ip) === "public";

/** The first resolved address that must not be dialed, with its class, if any. */
export function firstNonPublic(
  addresses: readonly string[],
): { address: string; cls: AddressClass } | undefined {
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls !== "public") return { address, cls };
  }
  return undefined;
}

/** An IP literal (v4, or v6 with or without brackets), as opposed to a name to resolve. */
export const isIpLiteral = (host: string): boolean =>
  parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;
