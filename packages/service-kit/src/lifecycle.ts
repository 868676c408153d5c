import cluster from "node:cluster";
import type { Logger } from "pino";
import { isStopMessage } from "./workers";

type Cleanup = () => Promise<unknown> | unknown;

/** How long one shutdown step may take: draining a NATS connection that cannot reach its server never ends. */
const STEP_TIMEOUT_MS = 10_000;

/**
 * Graceful shutdown: on SIGTERM or SIGINT run the registered steps in reverse order of
 * registration (stop accepting first, close stores last), each bounded in time, then exit. A second
 * signal exits at once.
 */
export class Lifecycle {
  private readonly steps: { name: string; run: Cleanup }[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  onStop(name: string, run: Cleanup): void {
    this.steps.push({ name, run });
  }

  listen(): void {
    const handle = (signal: NodeJS.Signals) => {
      if (this.stopping) process.exit(1);
      this.logger.info({ signal }, "shutting down");
      void this.stop().then(() => process.exit(0));
    };
    process.on("SIGTERM", handle);
    process.on("SIGINT", handle);
    // A worker of `runWorkers`: its primary asks it to stop. A Ctrl-C signals the worker too, so
    // the request may come second: it is not a second signal.
    if (cluster.isWorker) {
      process.on("message", (message) => {
        if (!isStopMessage(message) || this.stopping) return;
        this.logger.info({ signal: "primary" }, "shutting down");
        void this.stop().then(() => process.exit(0));
      });
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.runSteps();
    return this.stopping;
  }

  private async runSteps(): Promise<void> {
    for (const step of [...this.steps].reverse()) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          step.run(),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`did not finish in ${STEP_TIMEOUT_MS} ms`)),
              STEP_TIMEOUT_MS,
            );
            timer.unref();
          }),
        ]);
      } catch (error) {
        this.logger.error({ err: error, step: step.name }, "shutdown step failed");
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
