import { connectServiceBus, DEFAULT_REQUEST_STREAM_LIMITS } from "@agentnet/bus";
import { openWarehouse } from "@agentnet/clickhouse";
import { requestStreamLimits, runOptionsFromEnv, runService } from "@agentnet/service-kit";
import { startTelemetry } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);

await runService(
  { ...runOptionsFromEnv("telemetry", env), healthPort: env.HEALTH_PORT },
  async ({ logger, lifecycle, tracer, metrics }) => {
    const warehouse = await openWarehouse({
      url: env.CLICKHOUSE_URL,
      dataDir: env.CHDB_DATA_DIR,
      database: env.CLICKHOUSE_DATABASE,
      username: env.CLICKHOUSE_USER,
      password: env.CLICKHOUSE_PASSWORD,
    });
    lifecycle.onStop("warehouse", () => warehouse.close());
    if (warehouse.engine === "chdb") {
      logger.info(
        { dataDir: env.CHDB_DATA_DIR },
        "telemetry on chDB must be the only telemetry instance: chDB's files belong to one process; " +
          "several instances need a ClickHouse server (CLICKHOUSE_URL)",
      );
    }
    const nc = await connectServiceBus(env, "telemetry", { lifecycle, tracer, metrics });
    const telemetry = await startTelemetry({
      nc,
      warehouse,
      logger,
      metrics,
      options: {
        batchSize: env.TELEMETRY_BATCH_SIZE,
        flushIntervalMs: env.TELEMETRY_FLUSH_INTERVAL_MS,
        retentionIntervalMs: env.TELEMETRY_RETENTION_INTERVAL_MS,
        rollupIntervalMs: env.TELEMETRY_ROLLUP_INTERVAL_MS,
        requestStream: { ...DEFAULT_REQUEST_STREAM_LIMITS, ...requestStreamLimits(env) },
      },
    });
    // Registered after NATS: stops run in reverse, so consuming stops and the last batch is written
    // and acked before the connection drains and the warehouse closes.
    lifecycle.onStop("ingest", () => telemetry.stop());
    return { nats: env.NATS_URL, warehouse: env.CLICKHOUSE_URL === undefined ? "chdb" : "server" };
  },
);
