import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";

const FIXTURE = join(import.meta.dirname, "metrics.fixture.ts");

let running: ChildProcess | undefined;
afterEach(() => {
  if (running?.exitCode === null) running.kill("SIGKILL");
});

/** The fixture service as its own process, with `env`; resolves with its ready line. */
async function startService(env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ["--import", createRequire(import.meta.url).resolve("tsx"), FIXTURE],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  running = child;
  return new Promise<{ metrics?: string }>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the fixture exited with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const parsed = JSON.parse(line) as { ready?: boolean; metrics?: string };
      if (parsed.ready) resolve(parsed);
    });
  });
}

describe("the metrics port of a service without an HTTP server of its own", () => {
  it("serves /metrics in Prometheus' text format: its own series and Node's, each labelled with the service", async () => {
    const ready = await startService({ AGN_METRICS_PORT: "0" });
    expect(ready.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(ready.metrics as string);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toMatch(/^agentnet_fixture_jobs_total\{kind="sweep",service="metered"\} 3$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total\{service="metered"\} [\d.e+-]+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds\{service="metered"\} /m);
  });

  it("answers /healthz and /readyz there too, and nothing else", async () => {
    const ready = await startService({ AGN_METRICS_PORT: "0" });
    const base = (ready.metrics as string).replace(/\/metrics$/, "");
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: "ready" });
    const other = await fetch(`${base}/metrics/x`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ message: "not found", code: 404 });
  });

  it("keeps no metrics and opens no port without AGN_METRICS_PORT", async () => {
    const ready = await startService({});
    expect(ready.metrics).toBeUndefined();
  });

  it("refuses a metrics port that is not a port, naming the variable", async () => {
    const child = spawn(
      process.execPath,
      ["--import", createRequire(import.meta.url).resolve("tsx"), FIXTURE],
      { env: { ...process.env, AGN_METRICS_PORT: "http" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    running = child;
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/AGN_METRICS_PORT/);
  });
});
