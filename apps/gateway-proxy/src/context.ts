import type { NatsConnection } from "@agentnet/bus";
import type { LeaseTable } from "@agentnet/caps";
import type { GatewayProvider, GatewayRequestEvent } from "@agentnet/contracts";
import { providerCredentialAad, type SealingKeys, unseal } from "@agentnet/sealing";
import type { Logger } from "@agentnet/service-kit";
import type { VendorCredentials } from "@agentnet/vendor-auth";
import type { AdmissionAnnouncer } from "./events/admission";
import type { CredentialRejections } from "./events/credential-rejections";
import type { ServedEndpoints } from "./events/heartbeat";
import type { BufferedPublisher } from "./events/publisher";
import type { ProxyMetrics } from "./metrics";
import type { ProviderRouting } from "./request/routing";
import type { AccountView, SnapshotCache } from "./snapshot/cache";
import type { CallerCache } from "./snapshot/callers";
import type { UpstreamPools } from "./upstream/pools";

export interface ProxyOptions {
  trustProxy: boolean;
  bodyLimitBytes: number;
}

/** What request handling needs, built once by `startGatewayProxy`. */
export interface ProxyContext {
  nc: NatsConnection;
  admissions: AdmissionAnnouncer;
  credentialRejections: CredentialRejections;
  logger: Logger;
  sealingKey: SealingKeys;
  callers: CallerCache;
  snapshots: SnapshotCache;
  leases: LeaseTable;
  pools: UpstreamPools;
  /** Provider keys exchanged for tokens (service-account keys, Entra ID): minted, cached, refreshed. */
  credentials: VendorCredentials;
  /** Weighted rotations, requests in flight per provider, cooldowns: this proxy's routing state. */
  routing: ProviderRouting;
  publisher: BufferedPublisher<GatewayRequestEvent>;
  served: ServedEndpoints;
  options: ProxyOptions;
  /** Undefined with metrics off: nothing is counted then. */
  metrics?: ProxyMetrics;
}

/** The provider's credential, unsealed once per snapshot (a changed key arrives as a new snapshot). */
export function apiKeyOf(ctx: ProxyContext, view: AccountView, provider: GatewayProvider): string {
  let key = view.keys.get(provider.id);
  if (key === undefined) {
    key = unseal(
      ctx.sealingKey,
      provider.sealed_api_key,
      providerCredentialAad(view.snapshot.account_id, provider.id),
    );
    view.keys.set(provider.id, key);
  }
  return key;
}
