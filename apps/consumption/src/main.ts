import { connectServiceBus, DEFAULT_REQUEST_STREAM_LIMITS } from "@agentnet/bus";
import { requestStreamLimits, runOptionsFromEnv, runService } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { MONGO_CONNECTION_OPTIONS, startConsumption } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);

await runService(
  { ...runOptionsFromEnv("consumption", env), healthPort: env.HEALTH_PORT },
  async ({ logger, lifecycle, tracer, metrics }) => {
    const connection = await mongoose.createConnection(env.MONGO_URL, MONGO_CONNECTION_OPTIONS).asPromise();
    lifecycle.onStop("mongodb", () => connection.close());
    const nc = await connectServiceBus(env, "consumption", { lifecycle, tracer, metrics });
    const service = await startConsumption({
      nc,
      connection,
      logger,
      metrics,
      options: {
        quotaLeaseTtlMs: env.QUOTA_LEASE_TTL_SECONDS * 1000,
        leaseOutageGraceMs: env.AGN_LEASE_OUTAGE_SECONDS * 1000,
        sweepIntervalMs: env.SWEEP_INTERVAL_SECONDS * 1000,
        snapshotIntervalMs: env.SNAPSHOT_INTERVAL_SECONDS * 1000,
        pruneIntervalMs: env.PRUNE_INTERVAL_SECONDS * 1000,
        leaseTtlMs: env.LEASE_TTL_SECONDS === undefined ? undefined : env.LEASE_TTL_SECONDS * 1000,
        counterRetentionMs: env.COUNTER_RETENTION_DAYS * 24 * 3600 * 1000,
        durable: env.CONSUMER_DURABLE,
        admissionOrphanMs: env.AGN_PROXY_LOST_AFTER_SECONDS * 1000,
        requestStream: { ...DEFAULT_REQUEST_STREAM_LIMITS, ...requestStreamLimits(env) },
      },
    });
    lifecycle.onStop("consumer", () => service.stop());
    return { nats: env.NATS_URL };
  },
);
