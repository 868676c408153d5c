import { isIpLiteral } from "@agentnet/gateway-rules";

/**
 * The test-only allowance to dial hosts that resolve to non-public addresses (local vendor
 * servers live on 127.0.0.1). It names exact hostnames so that it can never widen into "any
 * private address": no wildcards, no IP literals, no bare single-label names like `localhost`.
 */
export function allowanceProblem(host: string): string | undefined {
  if (host.includes("*")) return `"${host}": wildcards are not allowed; name each host`;
  if (isIpLiteral(host)) return `"${host}": name a host, not an IP address`;
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host)) {
    return `"${host}": must be a lower-case, fully qualified hostname`;
  }
  return undefined;
}

/** Refuses an allowance that is not a list of exact hostnames. */
export function checkAllowance(hosts: readonly string[]): ReadonlySet<string> {
  const problems = hosts.map(allowanceProblem).filter((p): p is string => p !== undefined);
  if (problems.length > 0) throw new Error(`invalid private-host allowance: ${problems.join("; ")}`);
  return new Set(hosts);
}
