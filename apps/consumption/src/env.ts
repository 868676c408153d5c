import { baseEnv, envPort, leaseOutageEnv, parseEnvWith, requestStreamEnv } from "@agentnet/service-kit";
import { z } from "zod";

const seconds = z.coerce.number().int().min(0);

export const ConsumptionEnv = z.object({
  ...baseEnv,
  ...requestStreamEnv,
  ...leaseOutageEnv,
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  HEALTH_PORT: envPort.optional(),
  /** How long a proxy's lease of cap headroom lasts unless renewed (a dead proxy's headroom returns after it). */
  QUOTA_LEASE_TTL_SECONDS: z.coerce.number().min(1).default(6),
  /** How often expired leases are ended. */
  SWEEP_INTERVAL_SECONDS: z.coerce.number().min(0).default(1),
  /** How often changed counters are snapshotted and the settlement journal trimmed. */
  SNAPSHOT_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(5),
  /** How often counters of long-ended windows are pruned; 0 disables. */
  PRUNE_INTERVAL_SECONDS: seconds.default(3600),
  /**
   * How long a failed leader's lease outlives it before a standby replica takes over; by default 6
   * on one NATS server and 20 on a cluster (`AGN_STREAM_REPLICAS` above 1), where less than about
   * 18 lets the leases bucket's own election (4 to 9 s) depose the leader. Every replica must use
   * the same: the bucket keeps the longest one it was given.
   */
  LEASE_TTL_SECONDS: z.coerce.number().min(1).optional(),
  /** Counters stay listed this many days after their window ended. */
  COUNTER_RETENTION_DAYS: z.coerce.number().min(0).default(7),
  /**
   * A proxy silent this long is taken for dead and its unfinished requests are charged as admitted
   * (three of its heartbeats, AGN_PROXY_HEARTBEAT_SECONDS).
   */
  AGN_PROXY_LOST_AFTER_SECONDS: z.coerce.number().min(0.1).default(30),
  /** Durable JetStream consumer name on AGN_REQUESTS, shared by every replica. */
  CONSUMER_DURABLE: z.string().min(1).default("consumption"),
});
export type ConsumptionEnv = z.infer<typeof ConsumptionEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): ConsumptionEnv => parseEnvWith(ConsumptionEnv, source);
