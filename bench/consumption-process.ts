import type { ChildProcess } from "node:child_process";
import { startConsumptionProcess } from "./proxy-stack";

/**
 * The consumption service as deployed, in its own process (`startConsumptionProcess`) on
 * `database` and durable consumer `durable`; resolves once it leads.
 */
export const startBenchConsumption = (
  serviceEnv: Record<string, string>,
  database: string,
  durable: string,
): Promise<ChildProcess> =>
  startConsumptionProcess({ name: "consumption", busEnv: serviceEnv, mongoUrl: database, durable });

/** Stops the service as its orchestrator would (SIGTERM) and waits for it to exit. */
export async function stopBenchConsumption(consumption: ChildProcess | undefined) {
  if (!consumption) return;
  consumption.kill("SIGTERM");
  await new Promise((resolve) => consumption.once("exit", resolve));
}
