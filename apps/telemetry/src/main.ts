import { connectBus } from "@agentnet/bus";
import { openWarehouse } from "@agentnet/clickhouse";
import { createHealth, createLogger, Lifecycle, startHealthServer } from "@agentnet/service-kit";
import { startTelemetry } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);
const logger = createLogger("telemetry", env.LOG_LEVEL);
const lifecycle = new Lifecycle(logger);
const health = createHealth();
lifecycle.listen();

if (env.HEALTH_PORT !== undefined) {
  const server = await startHealthServer(health, env.HEALTH_PORT);
  lifecycle.onStop("health server", () => new Promise((resolve) => server.close(resolve)));
}
const warehouse = await openWarehouse({
  url: env.CLICKHOUSE_URL,
  dataDir: env.CHDB_DATA_DIR,
  database: env.CLICKHOUSE_DATABASE,
  username: env.CLICKHOUSE_USER,
  password: env.CLICKHOUSE_PASSWORD,
});
lifecycle.onStop("warehouse", () => warehouse.close());
const nc = await connectBus({ url: env.NATS_URL, name: "telemetry" });
lifecycle.onStop("nats", () => nc.drain());
const telemetry = await startTelemetry({
  nc,
  warehouse,
  logger,
  options: {
    batchSize: env.TELEMETRY_BATCH_SIZE,
    flushIntervalMs: env.TELEMETRY_FLUSH_INTERVAL_MS,
    retentionIntervalMs: env.TELEMETRY_RETENTION_INTERVAL_MS,
  },
});
// Registered after NATS: stops run in reverse, so consuming stops and the last batch is written
// and acked before the connection drains and the warehouse closes.
lifecycle.onStop("ingest", () => telemetry.stop());
lifecycle.onStop("readiness", () => health.setReady(false));
health.setReady(true);
logger.info(
  { ready: true, nats: env.NATS_URL, warehouse: env.CLICKHOUSE_URL === undefined ? "chdb" : "server" },
  "telemetry ready",
);
