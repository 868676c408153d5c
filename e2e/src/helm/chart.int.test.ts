import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { BUS_SERVICES, type BusService } from "@agentnet/contracts";
import { findRepoRoot } from "@agentnet/local-backends";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const root = findRepoRoot();
const chart = join(root, "infra", "helm", "agentnet");
const threeNodes = join(chart, "values-three-nodes.yaml");
const helm = join(root, ".data", "tools", "helm");

/** The services the chart runs: every one on the bus but the operator's CLI. */
type ServiceName = Exclude<BusService, "cli">;
const SERVICES = BUS_SERVICES.filter((name): name is ServiceName => name !== "cli");
const HTTP_PORTS: Partial<Record<ServiceName, number>> = { "gateway-proxy": 8090, "api-gateway": 8080 };

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  env: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  securityContext: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: {
    replicas?: number;
    maxUnavailable?: number;
    template?: {
      spec: {
        containers: Container[];
        securityContext: { runAsNonRoot?: boolean; runAsUser?: number };
        terminationGracePeriodSeconds?: number;
        automountServiceAccountToken?: boolean;
      };
    };
  };
}

async function runHelm(args: string[]) {
  if (!existsSync(helm)) throw new Error(`${helm} is missing: run bash infra/local/setup.sh`);
  return (await promisify(execFile)(helm, args, { cwd: root })).stdout;
}

async function render(...valuesFiles: string[]): Promise<Manifest[]> {
  const text = await runHelm(["template", "agentnet", chart, ...valuesFiles.flatMap((file) => ["-f", file])]);
  return parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

const deployments = (manifests: Manifest[]) =>
  new Map(
    manifests
      .filter((manifest) => manifest.kind === "Deployment")
      .map((manifest) => [manifest.metadata.name.replace(/^agentnet-/, ""), manifest]),
  );

const containerOf = (deployment: Manifest | undefined): Container => {
  const container = deployment?.spec.template?.spec.containers[0];
  if (container === undefined) throw new Error("no container");
  return container;
};

const envOf = (deployment: Manifest | undefined) =>
  new Map(containerOf(deployment).env.map((variable) => [variable.name, variable]));

/** Every setting an app reads is named in its env.ts or in the ones every service shares. */
const settingsOf = (service: ServiceName) =>
  [
    join(root, "apps", service, "src", "env.ts"),
    join(root, "packages", "service-kit", "src", "env.ts"),
    join(root, "packages", "service-kit", "src", "tracing-env.ts"),
  ]
    .map((file) => readFileSync(file, "utf8"))
    .join("\n");

describe("the Helm chart", () => {
  it("passes helm lint with the default values and with three nodes'", async () => {
    expect(await runHelm(["lint", chart])).toContain("0 chart(s) failed");
    expect(await runHelm(["lint", chart, "-f", threeNodes])).toContain("0 chart(s) failed");
  });

  it("runs every service from its image, at the replicas asked, as non-root on a read-only root", async () => {
    const byService = deployments(await render());
    expect([...byService.keys()].sort()).toEqual([...SERVICES].sort());
    const replicas = Object.fromEntries(SERVICES.map((name) => [name, byService.get(name)?.spec.replicas]));
    expect(replicas).toEqual({
      "gateway-proxy": 3,
      "api-gateway": 2,
      "control-plane": 2,
      consumption: 2,
      "provider-verifier": 2,
      telemetry: 2,
    });
    for (const name of SERVICES) {
      const pod = byService.get(name)?.spec.template?.spec;
      const container = containerOf(byService.get(name));
      expect(container.image, name).toBe(`agentnet/${name}:0.1.0`);
      expect(pod?.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod?.automountServiceAccountToken, name).toBe(false);
      expect(container.securityContext, name).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
    }
  });

  it("gives each service its NATS login, backends and sealing key from Secrets, never as values", async () => {
    const manifests = await render();
    expect(manifests.map((manifest) => manifest.kind)).not.toContain("Secret");
    const byService = deployments(manifests);
    for (const name of SERVICES) {
      const env = envOf(byService.get(name));
      expect(env.get("NATS_USER")?.value, name).toBe(name);
      expect(env.get("NATS_PASSWORD")?.valueFrom?.secretKeyRef, name).toEqual({
        name: "agentnet-nats",
        key: name,
      });
      expect(env.get("AGN_STREAM_REPLICAS")?.value, name).toBe("1");
      for (const variable of env.values()) {
        expect(settingsOf(name), `${name} reads ${variable.name}`).toContain(`${variable.name}:`);
        if (/PASSWORD|SEALING_KEY|MONGO_URL|CLICKHOUSE_USER/.test(variable.name)) {
          expect(variable.value, `${name} ${variable.name}`).toBeUndefined();
          expect(variable.valueFrom?.secretKeyRef, `${name} ${variable.name}`).toBeDefined();
        }
      }
      expect(env.has("MONGO_URL"), name).toBe(name === "control-plane" || name === "consumption");
      expect(env.has("AGN_SEALING_KEY"), name).toBe(name === "control-plane" || name === "gateway-proxy");
      expect(env.has("CLICKHOUSE_URL"), name).toBe(name === "telemetry");
    }
    expect(envOf(byService.get("telemetry")).get("CLICKHOUSE_URL")?.value).toBe("http://clickhouse:8123");
  });

  it("probes /readyz and /healthz as the images do: over HTTP on the proxy and the API, from inside the others", async () => {
    const byService = deployments(await render());
    for (const name of SERVICES) {
      const container = containerOf(byService.get(name));
      const port = HTTP_PORTS[name];
      if (port !== undefined) {
        expect(container.ports, name).toContainEqual({ name: "http", containerPort: port });
        expect(container.readinessProbe.httpGet, name).toEqual({ path: "/readyz", port: "http" });
        expect(container.livenessProbe.httpGet, name).toEqual({ path: "/healthz", port: "http" });
      } else {
        // HEALTH_PORT listens on the pod's loopback only: the kubelet could not reach it over HTTP.
        expect(container.ports, name).toBeUndefined();
        expect(container.readinessProbe.exec?.command.join(" "), name).toMatch(/HEALTH_PORT.*\/readyz/);
        expect(container.livenessProbe.exec?.command.join(" "), name).toMatch(/HEALTH_PORT.*\/healthz/);
      }
    }
  });

  it("keeps one pod of each replicated service up through a disruption, and serves the proxy and the API", async () => {
    const manifests = await render();
    const budgets = manifests.filter((manifest) => manifest.kind === "PodDisruptionBudget");
    expect(budgets.map((budget) => budget.metadata.name).sort()).toEqual(
      SERVICES.map((name) => `agentnet-${name}`).sort(),
    );
    for (const budget of budgets) expect(budget.spec.maxUnavailable, budget.metadata.name).toBe(1);
    const services = manifests.filter((manifest) => manifest.kind === "Service");
    expect(services.map((service) => service.metadata.name).sort()).toEqual([
      "agentnet-api-gateway",
      "agentnet-gateway-proxy",
    ]);
  });

  it("gives the proxy's streams their drain before the pod is killed", async () => {
    const proxy = deployments(await render()).get("gateway-proxy");
    const drainMs = Number(envOf(proxy).get("AGN_SHUTDOWN_DRAIN_MS")?.value);
    expect(drainMs).toBe(30_000);
    // The pre-stop pause (5 s), the drain, then the last events published and NATS drained.
    expect(proxy?.spec.template?.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      5 + drainMs / 1000 + 5,
    );
  });

  it("on three nodes, lists every NATS server and keeps three replicas of each stream, on TLS", async () => {
    const byService = deployments(await render(threeNodes));
    for (const name of SERVICES) {
      const env = envOf(byService.get(name));
      expect(env.get("NATS_URL")?.value?.split(","), name).toHaveLength(3);
      expect(env.get("AGN_STREAM_REPLICAS")?.value, name).toBe("3");
      expect(env.get("NATS_CA")?.value, name).toBe("/etc/agentnet/nats/ca.crt");
      expect(env.get("AGN_METRICS_HOST")?.value, name).toBe("0.0.0.0");
    }
  });

  it("refuses telemetry without a ClickHouse server: chDB's files belong to one pod", async () => {
    await expect(runHelm(["template", "agentnet", chart, "--set", "clickhouse.url="])).rejects.toThrow(
      /clickhouse.url is required/,
    );
  });
});
