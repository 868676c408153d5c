import type { AddressInfo } from "node:net";
import { connectServiceBus } from "@agentnet/bus";
import { createHttpServer, httpServerLimits, runOptionsFromEnv, runService } from "@agentnet/service-kit";
import { createApp } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);

await runService(
  runOptionsFromEnv("api-gateway", env),
  async ({ logger, lifecycle, health, tracer, metrics }) => {
    const nc = await connectServiceBus(env, "api-gateway", { lifecycle, tracer, metrics });
    const app = createApp({
      nc,
      logger,
      health,
      metrics,
      authCacheTtlMs: env.AUTH_CACHE_TTL_MS,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      authRateLimitPerMinute: env.AGN_AUTH_RATE_LIMIT_PER_MINUTE,
      trustProxy: env.AGN_TRUST_PROXY,
      ...(env.AGN_DASHBOARD_DIR ? { dashboardDir: env.AGN_DASHBOARD_DIR } : {}),
    });
    const server = createHttpServer(app, httpServerLimits(env), logger).listen(
      env.AGN_API_PORT,
      env.AGN_API_HOST,
    );
    await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
    lifecycle.onStop("http server", () => new Promise((resolve) => server.close(resolve)));
    const { address, port } = server.address() as AddressInfo;
    return { address, port };
  },
);
