import { setTimeout as delay } from "node:timers/promises";

/** Resolves after `ms`, or at once when `signal` ends: the wait between a handler's rounds. */
export const pause = (ms: number, signal: AbortSignal): Promise<unknown> =>
  delay(ms, undefined, { signal }).catch(() => undefined);
