import { rollHours } from "../store/rollup";
import type { TelemetryContext } from "./context";

/**
 * Rolls usage and access-log counts into hours every `intervalMs` (and shortly after start), one
 * roll at a time per process. The returned stop waits for a running roll, so the warehouse can
 * close after it.
 */
export function scheduleRollup(ctx: TelemetryContext, intervalMs: number): () => Promise<void> {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= rollHours(ctx.warehouse)
      .then(() => undefined)
      .catch((err: unknown) => ctx.logger.warn({ err }, "hourly rollup failed; will retry"))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, 1_000);
  const timer = setInterval(run, intervalMs);
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
