import { BlockList, isIP } from "node:net";

/**
 * Addresses a shared deployment must not let an admin's upstream URL reach (server-side request
 * forgery into the host's own network): loopback, private (RFC 1918, unique-local), link-local
 * (which holds cloud metadata at 169.254.169.254), carrier-grade NAT and unspecified addresses.
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/** True for an IP address in a private, loopback or link-local range (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped) return PRIVATE.check(mapped, "ipv4");
  const version = isIP(bare);
  if (version === 4) return PRIVATE.check(bare, "ipv4");
  if (version === 6) return PRIVATE.check(bare, "ipv6");
  return false;
}
