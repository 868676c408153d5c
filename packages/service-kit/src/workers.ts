import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { handleProcessFaults } from "./faults";
import { createHealth, type Health, startMetricsServer } from "./health";
import { createLogger } from "./logger";
import type { MetricsSettings } from "./metrics";

/**
 * Several processes of one service on one port (`node:cluster`): the primary forks `count`
 * workers, each the service as `runService` starts it (its own bus connection and state), and
 * shares their listening port among them; the primary itself only supervises. Used by the gateway
 * proxy (`AGN_PROXY_WORKERS`), whose work is CPU-bound per request.
 *
 * - Ready once every worker is: its ready line says how many, and `/readyz` answers 200.
 * - A worker that dies after it was ready is started again; one that dies before (a start that
 *   fails, as a bad setting does) stops them all, and the primary exits 1, as the service would.
 * - SIGTERM or SIGINT: each worker is asked to stop (over IPC, not a signal, so that a Ctrl-C,
 *   which signals the whole process group, is not taken as a second signal by a worker), drains as
 *   it would alone, and the primary exits 0 once all have. A second signal kills them at once.
 * - Metrics: the primary serves `/metrics` on the service's metrics port, the workers' series
 *   summed (prom-client's `AggregatorRegistry`); workers keep theirs without a listener.
 */
export interface WorkersOptions {
  name: string;
  logLevel: string;
  count: number;
  metrics?: MetricsSettings | undefined;
}

/** What a worker tells its primary, and the primary a worker, over the cluster's IPC channel. */
type WorkerMessage = { agentnet: "ready"; details: Record<string, unknown> };
const STOP_MESSAGE = { agentnet: "stop" } as const;

const isReadyMessage = (message: unknown): message is WorkerMessage =>
  typeof message === "object" && message !== null && (message as WorkerMessage).agentnet === "ready";

/** Whether this process is a worker its primary asked to stop (`runWorkers`). */
export const isStopMessage = (message: unknown): boolean =>
  typeof message === "object" &&
  message !== null &&
  (message as typeof STOP_MESSAGE).agentnet === STOP_MESSAGE.agentnet;

/** A worker is ready (`runService`): its primary counts it. */
export function announceWorkerReady(details: Record<string, unknown>): void {
  process.send?.({ agentnet: "ready", details } satisfies WorkerMessage);
}

export async function runWorkers(options: WorkersOptions): Promise<void> {
  const logger = createLogger(options.name, options.logLevel);
  handleProcessFaults(logger);
  const health = createHealth();
  const metricsUrl = options.metrics && (await serveClusterMetrics(options.metrics, health));
  const live = new Set<Worker>();
  const ready = new Set<Worker>();
  let announced = false;
  let stopping = false;
  let exitCode = 0;

  const stopAll = () => {
    stopping = true;
    health.setReady(false);
    if (live.size === 0) process.exit(exitCode);
    for (const worker of live) if (worker.isConnected()) worker.send(STOP_MESSAGE);
  };

  const fork = (index: number) => {
    const worker = cluster.fork({ AGN_WORKER_INDEX: String(index) });
    live.add(worker);
    worker.on("message", (message: unknown) => {
      if (!isReadyMessage(message)) return;
      ready.add(worker);
      if (announced || ready.size < options.count) return;
      announced = true;
      health.setReady(true);
      logger.info(
        {
          ready: true,
          ...message.details,
          workers: options.count,
          worker_pids: [...live].map((each) => each.process.pid),
          ...(metricsUrl ? { metrics: metricsUrl } : {}),
        },
        `${options.name} ready`,
      );
    });
    worker.on("exit", (code, signal) => {
      live.delete(worker);
      const wasReady = ready.delete(worker);
      if (stopping) {
        if (live.size === 0) process.exit(exitCode);
      } else if (wasReady) {
        const next = fork(index);
        logger.error(
          { worker: index, code, signal, pid: next.process.pid },
          `${options.name} worker exited: started another`,
        );
      } else {
        logger.fatal({ worker: index, code, signal }, `${options.name} worker failed to start`);
        exitCode = 1;
        stopAll();
      }
    });
    return worker;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      for (const worker of live) worker.process.kill("SIGKILL");
      process.exit(1);
    }
    logger.info({ signal, workers: live.size }, "shutting down");
    stopAll();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  for (let index = 0; index < options.count; index++) fork(index);
}

/** The workers' metrics summed, on the service's metrics port; its URL. */
async function serveClusterMetrics(settings: MetricsSettings, health: Health): Promise<string> {
  const aggregator = new AggregatorRegistry();
  const { url } = await startMetricsServer(health, settings, {
    contentType: aggregator.contentType,
    metrics: () => aggregator.clusterMetrics(),
  });
  return url;
}
