import type { AddressInfo } from "node:net";
import { connectBus } from "@agentnet/bus";
import { createHealth, createLogger, Lifecycle } from "@agentnet/service-kit";
import { createApp } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);
const logger = createLogger("api-gateway", env.LOG_LEVEL);
const lifecycle = new Lifecycle(logger);
const health = createHealth();
lifecycle.listen();

const nc = await connectBus({ url: env.NATS_URL, name: "api-gateway" });
lifecycle.onStop("nats", () => nc.drain());
const app = createApp({
  nc,
  logger,
  health,
  authCacheTtlMs: env.AUTH_CACHE_TTL_MS,
  bodyLimitBytes: env.BODY_LIMIT_BYTES,
  requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
  ...(env.AGN_DASHBOARD_DIR ? { dashboardDir: env.AGN_DASHBOARD_DIR } : {}),
});
const server = app.listen(env.AGN_API_PORT, env.AGN_API_HOST);
await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
lifecycle.onStop("http server", () => new Promise((resolve) => server.close(resolve)));
lifecycle.onStop("readiness", () => health.setReady(false));
health.setReady(true);
const { address, port } = server.address() as AddressInfo;
logger.info({ ready: true, address, port }, "api-gateway listening");
