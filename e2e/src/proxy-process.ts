import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { TEST_SEALING_KEY, testBusEnv } from "@agentnet/testkit";

const MAIN = join(dirname(createRequire(import.meta.url).resolve("@agentnet/gateway-proxy/app")), "main.ts");

/**
 * A gateway proxy in a process of its own (TypeScript through tsx, as `agentnet up` runs it, without
 * its heap flag) on this test file's NATS: what a second replica behind a load balancer is.
 * Resolves once it logged its ready line, with the URL it listens on. `allowedPrivateUpstreams`: the stack's fake vendors,
 * on loopback, which a proxy refuses unless allowed.
 */
export async function startProxyProcess(
  allowedPrivateUpstreams: readonly string[],
  env: Record<string, string> = {},
) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", createRequire(import.meta.url).resolve("tsx"), MAIN],
    {
      env: {
        ...process.env,
        ...(await testBusEnv("gateway-proxy")),
        AGN_SEALING_KEY: TEST_SEALING_KEY,
        AGN_PROXY_PORT: "0",
        AGN_AUTH_CACHE_MS: "0",
        AGN_ALLOWED_PRIVATE_UPSTREAMS: allowedPrivateUpstreams.join(","),
        LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const ready = await new Promise<{ url: string; metrics?: string; line: Record<string, unknown> }>(
    (resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("the proxy process did not get ready in 30 s")),
        30_000,
      );
      child.once("exit", (code) => reject(new Error(`the proxy process exited with ${code}`)));
      const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> });
      lines.on("line", (line) => {
        const parsed = safeJson(line);
        if (parsed?.ready === true && typeof parsed.url === "string") {
          clearTimeout(timer);
          resolve({
            url: parsed.url,
            ...(typeof parsed.metrics === "string" ? { metrics: parsed.metrics } : {}),
            line: parsed,
          });
        }
      });
    },
  );
  return {
    url: ready.url,
    /** Where its `/metrics` answers, when started with `AGN_METRICS_PORT`. */
    metricsUrl: ready.metrics,
    /** Its ready log line, parsed (with several workers: `worker_pids`). */
    readyLine: ready.line,
    /** Kills the process as a crash would (SIGKILL): no drain, no flush, no goodbye. */
    async crash() {
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGKILL");
      await exited;
    },
    /** SIGTERM, as a supervisor stops it; its exit code once it has drained. */
    async stop(): Promise<number | null> {
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      return exited;
    },
  };
}

function safeJson(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
