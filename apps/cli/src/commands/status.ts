import { localDataDir } from "../bus-credentials";
import type { CliEnv } from "../env";
import { runningStack } from "../stack-file";

export interface PartStatus {
  part: string;
  address: string;
  healthy: boolean;
  detail: string;
}

async function probe(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}

/** `agentnet status`: what runs, where, and whether it is healthy (readiness, the proxy's event pipeline). */
export async function stackStatus(env: CliEnv): Promise<{ running: boolean; parts: PartStatus[] }> {
  const stack = runningStack(localDataDir(env));
  const api = `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}`;
  const proxy = `http://${env.AGN_API_HOST}:${env.AGN_PROXY_PORT}`;
  const demo = `http://127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}`;
  const [apiReady, proxyReady, proxyStatus, demoModels] = await Promise.all([
    probe(`${api}/readyz`),
    probe(`${proxy}/readyz`),
    probe(`${proxy}/status`),
    probe(`${demo}/v1/models`),
  ]);
  const events = proxyStatus
    ? (JSON.parse(proxyStatus.body) as { events?: Record<string, unknown> }).events
    : undefined;
  const parts: PartStatus[] = [
    {
      part: "agentnet up",
      address: stack ? `pid ${stack.pid}` : "-",
      healthy: stack !== undefined,
      detail: stack ? `running, NATS ${stack.nats_url || "starting"}` : "not running on this data directory",
    },
    {
      part: "api-gateway",
      address: api,
      healthy: apiReady?.status === 200,
      detail: apiReady
        ? apiReady.status === 200
          ? "ready"
          : `not ready (${apiReady.status})`
        : "not answering",
    },
    {
      part: "gateway-proxy",
      address: proxy,
      healthy: proxyReady?.status === 200 && events?.publishing === true,
      detail: !proxyReady
        ? "not answering"
        : `${proxyReady.status === 200 ? "ready" : "not ready"}; events ${
            events?.publishing ? "publishing" : `NOT publishing (${String(events?.last_error ?? "unknown")})`
          }, ${String(events?.pending ?? "?")} pending, ${String(events?.dropped ?? "?")} dropped`,
    },
    {
      part: "demo-upstream",
      address: demo,
      healthy: demoModels?.status === 200,
      detail: demoModels?.status === 200 ? "answering" : "not answering",
    },
  ];
  return { running: stack !== undefined, parts };
}
