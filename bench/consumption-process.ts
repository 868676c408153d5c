import type { ChildProcess } from "node:child_process";
import { spawnBenchScript } from "./bench-script";

/**
 * The consumption service as deployed, in its own process (`consumption-service.ts`, with
 * `--max-semi-space-size=64` as `agentnet up` starts it) on `database` and durable consumer
 * `durable`; resolves once it leads. `BENCH_CONSUMPTION_NODE_ARGS` adds node flags (a profiler).
 */
export const startBenchConsumption = (
  serviceEnv: Record<string, string>,
  database: string,
  durable: string,
) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawnBenchScript(
      "consumption-service.ts",
      { BENCH_MONGO_URL: database, BENCH_DURABLE: durable, ...serviceEnv },
      [
        // As `agentnet up` starts it (apps/consumption/README.md, "Node flags").
        "--max-semi-space-size=64",
        ...(process.env.BENCH_CONSUMPTION_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      ],
    );
    child.stdout?.on("data", (data: Buffer) => {
      if (data.toString().includes('"ready":true')) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`consumption exited with ${code}`)));
  });

/** Stops the service as its orchestrator would (SIGTERM) and waits for it to exit. */
export async function stopBenchConsumption(consumption: ChildProcess | undefined) {
  if (!consumption) return;
  consumption.kill("SIGTERM");
  await new Promise((resolve) => consumption.once("exit", resolve));
}
