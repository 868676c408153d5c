import { connectBus } from "@agentnet/bus";
import { createHealth, createLogger, Lifecycle, startHealthServer } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { startConsumption } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);
const logger = createLogger("consumption", env.LOG_LEVEL);
const lifecycle = new Lifecycle(logger);
const health = createHealth();
lifecycle.listen();

if (env.HEALTH_PORT !== undefined) {
  const server = await startHealthServer(health, env.HEALTH_PORT);
  lifecycle.onStop("health server", () => new Promise((resolve) => server.close(resolve)));
}
const connection = await mongoose
  .createConnection(env.MONGO_URL, { serverSelectionTimeoutMS: 10_000 })
  .asPromise();
lifecycle.onStop("mongodb", () => connection.close());
const nc = await connectBus({ url: env.NATS_URL, name: "consumption" });
lifecycle.onStop("nats", () => nc.drain());
const service = await startConsumption({
  nc,
  connection,
  logger,
  options: {
    reservationTtlMs: env.RESERVATION_TTL_SECONDS * 1000,
    sweepIntervalMs: env.SWEEP_INTERVAL_SECONDS * 1000,
    pruneIntervalMs: env.PRUNE_INTERVAL_SECONDS * 1000,
    counterRetentionMs: env.COUNTER_RETENTION_DAYS * 24 * 3600 * 1000,
    durable: env.CONSUMER_DURABLE,
  },
});
lifecycle.onStop("consumer", () => service.stop());
lifecycle.onStop("readiness", () => health.setReady(false));
health.setReady(true);
logger.info({ ready: true, nats: env.NATS_URL }, "consumption ready");
