import { connectBus } from "@agentnet/bus";
import { createHealth, createLogger, Lifecycle, startHealthServer } from "@agentnet/service-kit";
import { startVerifier } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);
const logger = createLogger("provider-verifier", env.LOG_LEVEL);
const lifecycle = new Lifecycle(logger);
const health = createHealth();
lifecycle.listen();

if (env.HEALTH_PORT !== undefined) {
  const server = await startHealthServer(health, env.HEALTH_PORT);
  lifecycle.onStop("health server", () => new Promise((resolve) => server.close(resolve)));
}
const nc = await connectBus({ url: env.NATS_URL, name: "provider-verifier" });
lifecycle.onStop("nats", () => nc.drain());
await startVerifier({
  nc,
  logger,
  options: {
    timeoutMs: env.VERIFY_TIMEOUT_MS,
    maxBodyBytes: env.VERIFY_MAX_BODY_BYTES,
    allowPrivateHosts: env.VERIFY_ALLOW_PRIVATE_HOSTS,
    ...(env.VERIFY_EXTRA_CA_PEM ? { extraCa: [env.VERIFY_EXTRA_CA_PEM] } : {}),
  },
});
lifecycle.onStop("readiness", () => health.setReady(false));
health.setReady(true);
logger.info({ ready: true, nats: env.NATS_URL }, "provider-verifier ready");
