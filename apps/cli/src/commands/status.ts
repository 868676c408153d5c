import { localDataDir } from "../bus-credentials";
import type { CliEnv } from "../env";
import { runningStack, type StackEndpoint } from "../stack-file";

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

/** Where a stack started with `env` listens when no running `up` says so: one of each part. */
const defaultEndpoints = (env: CliEnv): StackEndpoint[] => [
  { name: "api-gateway", kind: "api-gateway", url: `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}` },
  { name: "gateway-proxy", kind: "gateway-proxy", url: `http://${env.AGN_API_HOST}:${env.AGN_PROXY_PORT}` },
  { name: "demo-upstream", kind: "demo-upstream", url: `http://127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}` },
];

async function endpointStatus(endpoint: StackEndpoint): Promise<PartStatus> {
  const part = { part: endpoint.name, address: endpoint.url };
  switch (endpoint.kind) {
    case "nats": {
      const health = endpoint.monitor_url ? await probe(`${endpoint.monitor_url}/healthz`) : undefined;
      return {
        ...part,
        healthy: health?.status === 200,
        detail: !health
          ? "not answering"
          : health.status === 200
            ? "JetStream current"
            : `not ready (${health.body.trim()})`,
      };
    }
    case "api-gateway": {
      const ready = await probe(`${endpoint.url}/readyz`);
      return {
        ...part,
        healthy: ready?.status === 200,
        detail: ready ? (ready.status === 200 ? "ready" : `not ready (${ready.status})`) : "not answering",
      };
    }
    case "gateway-proxy": {
      const [ready, status] = await Promise.all([
        probe(`${endpoint.url}/readyz`),
        probe(`${endpoint.url}/status`),
      ]);
      const events = status
        ? (JSON.parse(status.body) as { events?: Record<string, unknown> }).events
        : undefined;
      return {
        ...part,
        healthy: ready?.status === 200 && events?.publishing === true,
        detail: !ready
          ? "not answering"
          : `${ready.status === 200 ? "ready" : "not ready"}; events ${
              events?.publishing
                ? "publishing"
                : `NOT publishing (${String(events?.last_error ?? "unknown")})`
            }, ${String(events?.pending ?? "?")} pending, ${String(events?.dropped ?? "?")} dropped`,
      };
    }
    case "demo-upstream": {
      const models = await probe(`${endpoint.url}/v1/models`);
      return {
        ...part,
        healthy: models?.status === 200,
        detail: models?.status === 200 ? "answering" : "not answering",
      };
    }
  }
}

/**
 * `agentnet status`: what runs, where, and whether it is healthy: every NATS node of a cluster
 * (its JetStream), every replica of the API and the proxy (readiness, the proxy's event pipeline),
 * the demo upstream.
 */
export async function stackStatus(env: CliEnv): Promise<{ running: boolean; parts: PartStatus[] }> {
  const stack = runningStack(localDataDir(env));
  const endpoints = stack && stack.endpoints.length > 0 ? stack.endpoints : defaultEndpoints(env);
  const parts: PartStatus[] = [
    {
      part: "agentnet up",
      address: stack ? `pid ${stack.pid}` : "-",
      healthy: stack !== undefined,
      detail: stack
        ? `running, NATS ${stack.nats_urls.join(",") || "starting"}`
        : "not running on this data directory",
    },
    ...(await Promise.all(endpoints.map(endpointStatus))),
  ];
  return { running: stack !== undefined, parts };
}
