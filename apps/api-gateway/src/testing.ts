import type { AddressInfo } from "node:net";
import type { NatsConnection } from "@agentnet/bus";
import {
  createHealth,
  createHttpServer,
  DEFAULT_HTTP_SERVER_LIMITS,
  type Logger,
} from "@agentnet/service-kit";
import { type ApiGatewayOptions, createApp } from "./app";

/**
 * The api-gateway on a free loopback port, behind the same HTTP server as in production, for tests
 * that drive other services through the public API. No token cache, so a revoked token or a role
 * change is seen at once.
 */
export async function startTestApi(
  deps: { nc: NatsConnection; logger: Logger } & Partial<Omit<ApiGatewayOptions, "nc" | "logger" | "health">>,
) {
  const health = createHealth();
  health.setReady(true);
  const app = createApp({
    authCacheTtlMs: 0,
    bodyLimitBytes: 1_048_576,
    requestTimeoutMs: 10_000,
    authRateLimitPerMinute: 120,
    trustProxy: false,
    ...deps,
    health,
  });
  const server = createHttpServer(app, DEFAULT_HTTP_SERVER_LIMITS, deps.logger).listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
