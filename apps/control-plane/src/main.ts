import { connectBus } from "@agentnet/bus";
import { parseSealingKey } from "@agentnet/sealing";
import { createHealth, createLogger, Lifecycle, startHealthServer } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { startControlPlane } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);
const sealingKey = parseSealingKey(env.AGN_SEALING_KEY);
const logger = createLogger("control-plane", env.LOG_LEVEL);
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
const nc = await connectBus({ url: env.NATS_URL, name: "control-plane" });
lifecycle.onStop("nats", () => nc.drain());
await startControlPlane({ nc, connection, logger, sealingKey, verifyTimeoutMs: env.VERIFY_TIMEOUT_MS });
lifecycle.onStop("readiness", () => health.setReady(false));
health.setReady(true);
logger.info({ ready: true, nats: env.NATS_URL }, "control-plane ready");
