/** Names that always reach this proxy from the same machine: local SDK use must work without DNS. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The Host header without its port, lowercase; IPv6 literals lose their brackets. */
export function hostWithoutPort(host: string | undefined): string {
  const text = (host ?? "").trim().toLowerCase();
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    return end === -1 ? text : text.slice(1, end);
  }
  const colon = text.indexOf(":");
  return colon === -1 ? text : text.slice(0, colon);
}

export type HostCheck = { ok: true } | { ok: false; reason: "gateway.endpoint_mismatch" };

/**
 * A token of one account must not be used through another account's endpoint: when the account
 * has an endpoint, the request's Host must be it (or a loopback name, for local SDK use).
 */
export function checkHost(accountEndpoint: string, host: string | undefined): HostCheck {
  if (accountEndpoint === "") return { ok: true };
  const name = hostWithoutPort(host);
  if (name === accountEndpoint.toLowerCase() || LOOPBACK.has(name)) return { ok: true };
  return { ok: false, reason: "gateway.endpoint_mismatch" };
}
