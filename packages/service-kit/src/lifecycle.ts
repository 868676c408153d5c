import type { Logger } from "pino";

type Cleanup = () => Promise<unknown> | unknown;

/**
 * Graceful shutdown: on SIGTERM or SIGINT run the registered steps in reverse order of
 * registration (stop accepting first, close stores last), then exit. A second signal exits at once.
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
  }

  stop(): Promise<void> {
    this.stopping ??= this.runSteps();
    return this.stopping;
  }

  private async runSteps(): Promise<void> {
    for (const step of [...this.steps].reverse()) {
      try {
        await step.run();
      } catch (error) {
        this.logger.error({ err: error, step: step.name }, "shutdown step failed");
      }
    }
  }
}
