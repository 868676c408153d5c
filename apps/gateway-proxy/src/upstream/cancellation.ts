import { EventEmitter } from "node:events";

/**
 * Aborts an upstream attempt (its client left, or the proxy cut a stream at its cap). undici takes
 * an EventEmitter with an `aborted` flag as a request's signal; making, listening on and leaving
 * one costs well under a microsecond, an AbortController (an EventTarget and its AbortSignal)
 * about 8 µs, and every attempt makes one.
 */
export class Cancellation extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
}

/** What a wait on the client gives up on: a Cancellation, or an AbortSignal of code not on the hot path. */
export type Abortable = Cancellation | AbortSignal;

/** Calls `listener` once `abortable` aborts; returns what stops listening. */
export function onAbort(abortable: Abortable, listener: () => void): () => void {
  if (abortable instanceof Cancellation) {
    abortable.once("abort", listener);
    return () => abortable.off("abort", listener);
  }
  abortable.addEventListener("abort", listener, { once: true });
  return () => abortable.removeEventListener("abort", listener);
}
