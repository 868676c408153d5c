import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import { freePorts } from "@agentnet/local-backends";
import { connectTestBus, TEST_SEALING_KEY, testBackends, testBusEnv, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OtlpReceiver } from "../tracing/receiver";
import { FakeUpstream } from "../upstream";
import {
  BUNDLED_APPS,
  type BundledApp,
  type BundleProcess,
  buildBundles,
  deployBundles,
  startBundle,
  waitUntilAnswers,
} from "./deployed-bundle";

/**
 * What the production images run, short of the container: every app's bundle built by its own
 * build script, deployed with its production dependencies alone as the Dockerfile deploys it, and
 * started with plain node against an authenticated NATS and the MongoDB-wire store with its login.
 */
describe("the production bundles, deployed as the Dockerfile deploys them", () => {
  const vendor = new FakeUpstream();
  /** Every service exports its traces here, as to an operator's collector. */
  const collector = new OtlpReceiver();
  const bundles = new Map<BundledApp, BundleProcess>();
  /** Each service's readiness URL: where the image's HEALTHCHECK asks. */
  const readyz = new Map<BundledApp, string>();
  let root: string;
  let apiUrl: string;
  let proxyUrl: string;
  let vendorUrl: string;

  beforeAll(async () => {
    vendorUrl = await vendor.start();
    root = mkdtempSync(join(tmpdir(), "agn-bundles-"));
    await buildBundles();
    await deployBundles(root);

    const { mongoUrl } = testBackends();
    // Distinct ports: separate freePort calls may hand out the same one twice.
    const [proxyPort, apiPort, ...healthPorts] = await freePorts(6);
    const healthPort = async (app: BundledApp) => {
      const port = healthPorts.pop();
      readyz.set(app, `http://127.0.0.1:${port}/readyz`);
      return { HEALTH_PORT: String(port) };
    };
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    apiUrl = `http://127.0.0.1:${apiPort}`;
    readyz.set("gateway-proxy", `${proxyUrl}/readyz`);
    readyz.set("api-gateway", `${apiUrl}/readyz`);
    const env: Record<BundledApp, Record<string, string>> = {
      "control-plane": {
        ...(await testBusEnv("control-plane")),
        ...(await healthPort("control-plane")),
        MONGO_URL: mongoUrl,
        AGN_SEALING_KEY: TEST_SEALING_KEY,
      },
      "provider-verifier": {
        ...(await testBusEnv("provider-verifier")),
        ...(await healthPort("provider-verifier")),
      },
      // The image sets AGN_DATA_DIR; without CLICKHOUSE_URL chDB keeps its data there.
      telemetry: {
        ...(await testBusEnv("telemetry")),
        ...(await healthPort("telemetry")),
        AGN_DATA_DIR: join(root, "data"),
      },
      consumption: {
        ...(await testBusEnv("consumption")),
        ...(await healthPort("consumption")),
        MONGO_URL: mongoUrl,
      },
      "gateway-proxy": {
        ...(await testBusEnv("gateway-proxy")),
        AGN_SEALING_KEY: TEST_SEALING_KEY,
        AGN_PROXY_PORT: String(proxyPort),
        // The fake vendor listens on loopback, which the proxy refuses unless allowed.
        AGN_ALLOWED_PRIVATE_UPSTREAMS: new URL(vendorUrl).host,
      },
      "api-gateway": { ...(await testBusEnv("api-gateway")), AGN_API_PORT: String(apiPort) },
    };
    const collectorUrl = await collector.start();
    for (const app of BUNDLED_APPS) env[app].OTEL_EXPORTER_OTLP_ENDPOINT = collectorUrl;
    const heapTuned = new Set<BundledApp>(["telemetry", "consumption", "gateway-proxy"]);
    for (const app of BUNDLED_APPS) {
      bundles.set(
        app,
        startBundle(root, app, env[app], heapTuned.has(app) ? ["--max-semi-space-size=64"] : []),
      );
    }
    await Promise.all(
      BUNDLED_APPS.map((app) =>
        waitUntilAnswers(bundles.get(app) as BundleProcess, readyz.get(app) as string),
      ),
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...bundles.values()].map((bundle) => bundle.stop(1_000)));
    await vendor.stop();
    await collector.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("starts every service from its bundle, which says it is ready and answers its health check", async () => {
    for (const app of BUNDLED_APPS) {
      const bundle = bundles.get(app) as BundleProcess;
      expect(
        bundle.output.some((line) => line.includes('"ready":true')),
        app,
      ).toBe(true);
      const url = readyz.get(app) as string;
      expect((await fetch(url)).status, url).toBe(200);
      expect((await fetch(url.replace(/readyz$/, "healthz"))).status, url).toBe(200);
    }
  });

  it("bootstraps an account, carries a capped request to the vendor and shows it in the access log and the counters", async () => {
    const cli = await connectTestBus("cli");
    const { token } = await request(cli, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("bundles")}@example.com`,
    });
    await cli.drain();
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${apiUrl}/api${path}`, {
        method,
        headers: { authorization: `Token ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(response.status, `${method} ${path}`).toBeLessThan(300);
      return (await response.json()) as T;
    };
    await api("POST", "/agent-network/settings", { proxy_address: "gw.example.com" });
    // A provider is written only once the verifier answered (503 while none does).
    const provider = await api<{ id: string }>("POST", "/agent-network/providers", {
      provider_id: "custom",
      name: "Local vendor",
      upstream_url: `${vendorUrl}/v1`,
      api_key: "sk-vendor",
    });
    const [all] = await api<{ id: string }[]>("GET", "/groups");
    await api("POST", "/agent-network/policies", {
      name: "all",
      source_groups: [all?.id],
      destination_provider_ids: [provider.id],
    });
    // A cap makes the proxy lease headroom from consumption before it forwards.
    await api("POST", "/agent-network/budget-rules", {
      name: "generous",
      target_groups: [all?.id],
      limits: {
        token_limit: { enabled: true, group_cap: 1_000_000, user_cap: 0, window_seconds: 3600 },
        budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
      },
    });

    const completion = await fetch(`${proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(completion.status).toBe(200);
    expect(await completion.json()).toMatchObject({ object: "chat.completion" });
    expect(vendor.last?.headers.authorization).toBe("Bearer sk-vendor");

    await expect
      .poll(() => api<{ total_records: number }>("GET", "/agent-network/access-logs"), { timeout: 20_000 })
      .toMatchObject({ total_records: 1 });
    const logs = await api<{ data: { trace_id?: string }[] }>("GET", "/agent-network/access-logs");
    expect(logs.data[0]).toMatchObject({ model: "gpt-4o", decision: "allow", total_tokens: 120 });
    // One trace, each process's spans under its own name (exported in batches, every 5 s).
    const traceId = logs.data[0]?.trace_id ?? "";
    await expect
      .poll(() => new Set(collector.trace(traceId).map((span) => span.service)), { timeout: 20_000 })
      .toEqual(new Set(["gateway-proxy", "control-plane", "consumption", "telemetry"]));
    await expect
      .poll(() => api<unknown[]>("GET", "/agent-network/consumption"), { timeout: 20_000 })
      .toContainEqual(
        expect.objectContaining({
          dimension_kind: "group",
          dimension_id: all?.id,
          tokens_input: 100,
          tokens_output: 20,
        }),
      );
  });

  it("stops every service on SIGTERM, as docker stop sends it, with exit code 0", async () => {
    const edges: BundledApp[] = ["gateway-proxy", "api-gateway"];
    const stopped = async (apps: BundledApp[]) =>
      Promise.all(apps.map(async (app) => [app, await (bundles.get(app) as BundleProcess).stop()] as const));
    const codes = [
      ...(await stopped(edges)),
      ...(await stopped(BUNDLED_APPS.filter((app) => !edges.includes(app)))),
    ];
    expect(Object.fromEntries(codes)).toEqual(Object.fromEntries(BUNDLED_APPS.map((app) => [app, 0])));
  });
});
