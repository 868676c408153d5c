import { handleProcessFaults } from "./faults";
import { createHealth, type Health, startHealthServer } from "./health";
import { Lifecycle } from "./lifecycle";
import { createLogger, type Logger } from "./logger";

export interface ServiceKit {
  logger: Logger;
  lifecycle: Lifecycle;
  health: Health;
}

export interface RunServiceOptions {
  name: string;
  logLevel: string;
  /** Port of a bare `/healthz` + `/readyz` listener; services with an HTTP server of their own serve `health` themselves. */
  healthPort?: number | undefined;
}

/**
 * The start-up every service shares: logger, graceful shutdown, health. `start` connects and wires
 * the service, registering its shutdown steps on `lifecycle`, and returns what the ready line should
 * say. Only then is the service ready: `/readyz` answers 200 and the log carries `"ready":true`,
 * which `agentnet up` waits for. A failed start is logged and exits 1 after undoing what it did.
 * Errors nothing caught are logged (`handleProcessFaults`).
 */
export async function runService(
  options: RunServiceOptions,
  start: (kit: ServiceKit) => Promise<Record<string, unknown>>,
): Promise<void> {
  const logger = createLogger(options.name, options.logLevel);
  const lifecycle = new Lifecycle(logger);
  const health = createHealth();
  handleProcessFaults(logger);
  lifecycle.listen();
  try {
    if (options.healthPort !== undefined) {
      const server = await startHealthServer(health, options.healthPort);
      lifecycle.onStop("health server", () => new Promise((resolve) => server.close(resolve)));
    }
    const details = await start({ logger, lifecycle, health });
    lifecycle.onStop("readiness", () => health.setReady(false));
    health.setReady(true);
    logger.info({ ready: true, ...details }, `${options.name} ready`);
  } catch (error) {
    logger.fatal({ err: error }, `${options.name} failed to start`);
    await lifecycle.stop();
    process.exit(1);
  }
}
