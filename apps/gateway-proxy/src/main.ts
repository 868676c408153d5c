import cluster from "node:cluster";
import { connectServiceBus, DEFAULT_REQUEST_STREAM_LIMITS } from "@agentnet/bus";
import { parseSealingKeys } from "@agentnet/sealing";
import {
  httpServerLimits,
  metricsSettings,
  requestStreamLimits,
  runOptionsFromEnv,
  runService,
  runWorkers,
} from "@agentnet/service-kit";
import { startGatewayProxy } from "./app";
import { parseEnv } from "./env";

const env = parseEnv(process.env);

if (env.AGN_PROXY_WORKERS > 1 && cluster.isPrimary) {
  await runWorkers({
    name: "gateway-proxy",
    logLevel: env.LOG_LEVEL,
    count: env.AGN_PROXY_WORKERS,
    metrics: metricsSettings(env),
  });
} else {
  await runProxy();
}

async function runProxy() {
  await runService(
    runOptionsFromEnv("gateway-proxy", env),
    async ({ logger, lifecycle, health, tracer, metrics }) => {
      const sealingKey = parseSealingKeys(env.AGN_SEALING_KEY);
      const nc = await connectServiceBus(env, "gateway-proxy", { lifecycle, tracer, metrics });
      const proxy = await startGatewayProxy({
        nc,
        logger,
        sealingKey,
        health,
        metrics,
        options: {
          host: env.AGN_PROXY_HOST,
          port: env.AGN_PROXY_PORT,
          endpoints: env.AGN_PROXY_ENDPOINTS,
          trustProxy: env.AGN_TRUST_PROXY,
          bodyLimitBytes: env.AGN_PROXY_BODY_LIMIT_BYTES,
          headersTimeoutMs: env.AGN_UPSTREAM_HEADERS_TIMEOUT_MS,
          bodyTimeoutMs: env.AGN_UPSTREAM_BODY_TIMEOUT_MS,
          connectionsPerOrigin: env.AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN,
          upstreamWaitMs: env.AGN_UPSTREAM_WAIT_MS,
          upstreamHttp2: env.AGN_UPSTREAM_HTTP2,
          refusePrivateUpstreams: env.AGN_REFUSE_PRIVATE_UPSTREAMS,
          allowedPrivateUpstreams: env.AGN_ALLOWED_PRIVATE_UPSTREAMS,
          httpLimits: httpServerLimits(env),
          eventBufferMax: env.AGN_EVENT_BUFFER_MAX,
          heartbeatMs: env.AGN_PROXY_HEARTBEAT_SECONDS * 1000,
          cooldown: {
            failures: env.AGN_COOLDOWN_FAILURES,
            windowMs: env.AGN_COOLDOWN_WINDOW_MS,
            cooldownMs: env.AGN_COOLDOWN_MS,
          },
          authCacheMs: env.AGN_AUTH_CACHE_MS,
          snapshotMaxAgeMs: env.AGN_SNAPSHOT_MAX_AGE_MS,
          staleServeMs: env.AGN_STALE_SERVE_SECONDS * 1000,
          shutdownDrainMs: env.AGN_SHUTDOWN_DRAIN_MS,
          requestStream: { ...DEFAULT_REQUEST_STREAM_LIMITS, ...requestStreamLimits(env) },
          leaseTimeoutMs: env.AGN_LEASE_TIMEOUT_MS,
          leaseIdleMs: env.AGN_LEASE_IDLE_MS,
          leaseOutageGraceMs: env.AGN_LEASE_OUTAGE_SECONDS * 1000,
        },
      });
      lifecycle.onStop("proxy", () => proxy.stop());
      return { url: proxy.url, nats: env.NATS_URL };
    },
  );
}
