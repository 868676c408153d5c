/** Start (epoch seconds) of the window holding `tSeconds`: windows are aligned to the Unix epoch. */
export const windowStart = (tSeconds: number, windowSeconds: number): number =>
  Math.floor(tSeconds / windowSeconds) * windowSeconds;

/** Whole seconds from `nowMs` until the window starting at `startSeconds` starts over (Retry-After). */
export const retryAfterSeconds = (nowMs: number, startSeconds: number, windowSeconds: number): number =>
  Math.max(0, Math.ceil(((startSeconds + windowSeconds) * 1000 - nowMs) / 1000));
