/** What asks `up` to stop: Ctrl-C, `kill`, and its terminal going away. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * A Ctrl-C reaches every process of the terminal's foreground group at once, and a runner among
 * them may pass its copy on: pnpm sends its script SIGINT, and SIGTERM on the next one it gets (from
 * a pnpm above it). Those copies come within milliseconds; a person pressing Ctrl-C again takes
 * longer than this.
 */
const SAME_REQUEST_MS = 1_000;

/**
 * Calls `stop` on the first stop signal and `stopAtOnce` on any that comes later than
 * SAME_REQUEST_MS after it; signals in between are copies of the first.
 */
export function onStopSignals(handlers: { stop: () => void; stopAtOnce: () => void }): void {
  let firstAt: number | undefined;
  const listener = () => {
    const now = performance.now();
    if (firstAt === undefined) {
      firstAt = now;
      handlers.stop();
    } else if (now - firstAt >= SAME_REQUEST_MS) {
      handlers.stopAtOnce();
    }
  };
  for (const name of STOP_SIGNALS) process.on(name, listener);
}
