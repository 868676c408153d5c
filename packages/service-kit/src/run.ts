import cluster from "node:cluster";
import type { Tracer } from "@opentelemetry/api";
import { AggregatorRegistry } from "prom-client";
import { handleProcessFaults } from "./faults";
import { createHealth, type Health, startHealthServer, startMetricsServer } from "./health";
import { Lifecycle } from "./lifecycle";
import { createLogger, type Logger } from "./logger";
import {
  createMetricsRegistry,
  type MetricsRegistry,
  type MetricsSettings,
  metricsSettings,
} from "./metrics";
import { type TracingEnv, type TracingSettings, tracingSettings } from "./tracing-env";
import { announceWorkerReady } from "./workers";

export interface ServiceKit {
  logger: Logger;
  lifecycle: Lifecycle;
  health: Health;
  /** Set when tracing is on: the service hands it to its bus connection (`useTracer`). */
  tracer: Tracer | undefined;
  /** Set when a metrics port is: the service registers its own metrics here (docs/OPERATIONS.md). */
  metrics: MetricsRegistry | undefined;
}

export interface RunServiceOptions {
  name: string;
  logLevel: string;
  /** Port of a bare `/healthz` + `/readyz` listener; services with an HTTP server of their own serve `health` themselves. */
  healthPort?: number | undefined;
  /**
   * `metricsSettings(env)`: the listener that serves `/metrics` (and `/healthz`, `/readyz`);
   * undefined keeps no metrics at all. On `healthPort` it is the one listener of both.
   */
  metrics?: MetricsSettings | undefined;
  /** `tracingSettings(env)`: undefined leaves tracing off, and its SDK unloaded. */
  tracing?: TracingSettings | undefined;
}

/** The options every service reads from its `baseEnv` alike: its log level, metrics and tracing. */
export const runOptionsFromEnv = (
  name: string,
  env: TracingEnv & { LOG_LEVEL: string; AGN_METRICS_PORT?: number | undefined; AGN_METRICS_HOST: string },
): RunServiceOptions => ({
  name,
  logLevel: env.LOG_LEVEL,
  tracing: tracingSettings(env),
  metrics: metricsSettings(env),
});

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
    const tracing = options.tracing
      ? await startServiceTracing(options.name, options.tracing, logger)
      : undefined;
    // Registered first, so it runs last: the spans of every other shutdown step are exported too.
    if (tracing) lifecycle.onStop("tracing", () => tracing.shutdown());
    if (options.healthPort !== undefined && options.healthPort !== options.metrics?.port) {
      const server = await startHealthServer(health, options.healthPort);
      lifecycle.onStop("health server", () => new Promise((resolve) => server.close(resolve)));
    }
    const metrics =
      options.metrics &&
      (cluster.isWorker
        ? { registry: workerMetricsRegistry(options.name), url: undefined }
        : await serveMetrics(options.name, options.metrics, health, lifecycle));
    const details = await start({
      logger,
      lifecycle,
      health,
      tracer: tracing?.tracer,
      metrics: metrics?.registry,
    });
    lifecycle.onStop("readiness", () => health.setReady(false));
    health.setReady(true);
    if (cluster.isWorker) {
      // Its primary's line, once every worker's is in, is the one `"ready":true` of the service.
      logger.info({ worker: process.env.AGN_WORKER_INDEX, ...details }, `${options.name} worker ready`);
      announceWorkerReady(details);
    } else {
      logger.info(
        { ready: true, ...details, ...(metrics?.url ? { metrics: metrics.url } : {}) },
        `${options.name} ready`,
      );
    }
  } catch (error) {
    logger.fatal({ err: error }, `${options.name} failed to start`);
    await lifecycle.stop();
    process.exit(1);
  }
}

/** A worker's registry: its primary serves it, summed with the other workers' (`runWorkers`). */
function workerMetricsRegistry(name: string) {
  const registry = createMetricsRegistry(name);
  AggregatorRegistry.setRegistries([registry]);
  // prom-client answers the primary's requests from a worker once an aggregator exists there.
  new AggregatorRegistry();
  return registry;
}

/** The service's metrics registry, served on its own listener from now on. */
async function serveMetrics(name: string, settings: MetricsSettings, health: Health, lifecycle: Lifecycle) {
  const registry = createMetricsRegistry(name);
  const { server, url } = await startMetricsServer(health, settings, registry);
  lifecycle.onStop("metrics server", () => new Promise((resolve) => server.close(resolve)));
  return { registry, url };
}

async function startServiceTracing(name: string, settings: TracingSettings, logger: Logger) {
  const { startTracing } = await import("./tracing");
  const tracing = startTracing(name, settings, logger);
  logger.info({ endpoint: new URL(settings.url).origin, sampler: settings.sampler }, "exporting traces");
  return tracing;
}
