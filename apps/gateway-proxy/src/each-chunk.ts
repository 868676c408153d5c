import type { Readable } from "node:stream";

/**
 * Passes each chunk of `readable` to `onChunk` until its end. Rejects with its error, with
 * `closedEarly` when it closes (or had closed) before its end, and with what `onChunk` throws,
 * which stops the reading there: the caller decides what becomes of the rest. Listeners rather
 * than a `for await`, whose async iterator, end-of-stream watch and promise per chunk showed in the
 * proxy's profile; and a throw in `onChunk` is the caller's, not the process's (data a `resume`
 * delivers comes on a tick of its own, outside any caller's `try`).
 */
export function eachChunk(
  readable: Readable,
  onChunk: (chunk: Buffer) => void,
  closedEarly: string,
): Promise<void> {
  if (readable.readableEnded) return Promise.resolve();
  if (readable.destroyed) return Promise.reject(readable.errored ?? new Error(closedEarly));
  return new Promise((resolve, reject) => {
    const stop = () => {
      readable.off("data", onData);
      readable.off("end", onEnd);
      readable.off("error", onError);
      readable.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      try {
        onChunk(chunk);
      } catch (error) {
        stop();
        reject(error);
      }
    };
    const onEnd = () => {
      stop();
      resolve();
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(new Error(closedEarly));
    };
    readable.on("data", onData);
    readable.on("end", onEnd);
    readable.on("error", onError);
    readable.on("close", onClose);
  });
}
