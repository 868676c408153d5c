import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type MetricsSettings, type MetricsSource, metricsResponse } from "./metrics";

export interface Health {
  /** Ready once connections are up; no longer ready once shutdown began. */
  setReady(ready: boolean): void;
  isReady(): boolean;
}

export function createHealth(): Health {
  let ready = false;
  return {
    setReady: (value) => {
      ready = value;
    },
    isReady: () => ready,
  };
}

/** `/healthz` answers while the process lives; `/readyz` answers 200 only while ready. */
export function healthResponse(health: Health, path: string): { status: number; body: string } | undefined {
  if (path === "/healthz") return { status: 200, body: '{"status":"ok"}' };
  if (path === "/readyz") {
    return health.isReady()
      ? { status: 200, body: '{"status":"ready"}' }
      : { status: 503, body: '{"status":"not ready"}' };
  }
  return undefined;
}

/**
 * A bare listener for `/healthz` and `/readyz`, and `/metrics` when given a registry: the health
 * port of services that have no HTTP server of their own, and every service's metrics port.
 */
export async function startHealthServer(
  health: Health,
  port: number,
  host = "127.0.0.1",
  metrics?: MetricsSource,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (metrics && path === "/metrics" && req.method === "GET") {
      metricsResponse(metrics).then(
        ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
        () =>
          res
            .writeHead(500, { "content-type": "application/json" })
            .end('{"message":"metrics failed","code":500}'),
      );
      return;
    }
    const answer = healthResponse(health, path);
    res.writeHead(answer?.status ?? 404, { "content-type": "application/json" });
    res.end(answer?.body ?? '{"message":"not found","code":404}');
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}

export const serverPort = (server: Server) => (server.address() as AddressInfo).port;

/** `/metrics` of `source` (with `/healthz`, `/readyz`) on the listener `settings` name; its URL. */
export async function startMetricsServer(health: Health, settings: MetricsSettings, source: MetricsSource) {
  const server = await startHealthServer(health, settings.port, settings.host, source);
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  return { server, url: `http://${host}:${serverPort(server)}/metrics` };
}
