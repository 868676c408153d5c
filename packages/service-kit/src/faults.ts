import type { Logger } from "pino";

/**
 * What a service does with an error nothing caught. A rejected promise nobody awaited has already
 * unwound the code that rejected (a publish that failed, a reply that could not be sent), so it is
 * logged and the service keeps serving: one bad request must not end a process every member
 * shares. An exception thrown out of a callback or timer may have stopped anything halfway, so
 * the state is not trusted: it is logged and the process exits 1, as Node would, for its
 * supervisor (`agentnet up`, systemd, Kubernetes) to start it afresh.
 */
export function handleProcessFaults(logger: Logger): void {
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason }, "unhandled rejection: logged, still serving");
  });
  process.on("uncaughtException", (error, origin) => {
    logger.fatal({ err: error, origin }, "uncaught exception: exiting");
    process.exit(1);
  });
}
