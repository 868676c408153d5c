import {
  type CreateSettingsBody,
  endpointChoiceError,
  type UpdateSettingsBody,
  unprocessable,
} from "@agentnet/contracts";

/**
 * Where the endpoint of a new settings record comes from: a dedicated hostname claimed verbatim,
 * or a label the server allocates under the cluster's proxy address. Exactly one must be given.
 */
export function endpointSource(
  body: CreateSettingsBody,
): { dedicated: true; endpoint: string } | { dedicated: false; proxyAddress: string } {
  const problem = endpointChoiceError(body);
  if (problem) throw unprocessable("settings.endpoint_choice", problem);
  if (body.endpoint !== undefined) return { dedicated: true, endpoint: body.endpoint };
  return { dedicated: false, proxyAddress: body.proxy_address ?? "" };
}

/**
 * Names that reach the host itself (`localhost`, `*.localhost`, 127.0.0.0/8, 0.0.0.0): the proxy
 * serves loopback Host headers to every account for local use, so no account may own one.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  const octets = name.split(".");
  const isIpv4 = octets.length === 4 && octets.every((octet) => /^\d{1,3}$/.test(octet));
  return isIpv4 && (octets[0] === "127" || name === "0.0.0.0");
}

/** Refuses a loopback name as an endpoint or a cluster address, naming the field. */
export function assertNotLoopback(field: "endpoint" | "proxy_address", hostname: string): void {
  if (!isLoopbackHostname(hostname)) return;
  throw unprocessable(
    "settings.loopback_hostname",
    `${field} ${hostname} is a loopback name, which no account may hold`,
    [{ path: field, message: "must not be a loopback name" }],
  );
}

/**
 * The cluster addresses a dedicated endpoint would fall under: itself and every parent domain.
 * A dedicated endpoint equal to another account's cluster address, or under it, would take over
 * that account's allocated endpoints (`agn-<label>.<proxy_address>`).
 */
export function clusterAddressesCovering(endpoint: string): string[] {
  const labels = endpoint.split(".");
  return labels.map((_, index) => labels.slice(index).join(".")).filter((name) => name.includes("."));
}

/** `<label>.<proxy_address>`: a fresh, unguessable label per allocation; released labels are never reused on purpose. */
export const allocateEndpoint = (proxyAddress: string, label: string): string =>
  `agn-${label}.${proxyAddress}`;

/** endpoint and proxy_address are immutable once assigned: a PUT must carry exactly the assigned values. */
export function assertAssignedUnchanged(
  stored: { endpoint: string; proxy_address: string },
  body: UpdateSettingsBody,
): void {
  const changed = [
    ...(body.endpoint !== stored.endpoint ? ["endpoint"] : []),
    ...(body.proxy_address !== stored.proxy_address ? ["proxy_address"] : []),
  ];
  if (changed.length > 0) {
    throw unprocessable(
      "settings.immutable_field",
      `${changed.join(" and ")} cannot change once assigned (assigned: endpoint "${stored.endpoint}", proxy_address "${stored.proxy_address}")`,
      changed.map((path) => ({ path, message: "must equal the assigned value" })),
    );
  }
}

/** How long after its last heartbeat a proxy still counts as actively serving an endpoint. */
export const ACTIVE_PROXY_WINDOW_MS = 30_000;

/** Endpoints proxies said they serve, with when they last said so. */
export class ActiveEndpoints {
  private readonly lastSeen = new Map<string, number>();

  record(endpoints: readonly string[], at: number): void {
    for (const endpoint of endpoints) {
      const key = endpoint.toLowerCase();
      this.lastSeen.set(key, Math.max(at, this.lastSeen.get(key) ?? 0));
    }
  }

  isActive(endpoint: string, now = Date.now()): boolean {
    const seen = this.lastSeen.get(endpoint.toLowerCase());
    return seen !== undefined && now - seen <= ACTIVE_PROXY_WINDOW_MS;
  }
}
