import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { eachChunk } from "./each-chunk";

const CLOSED = "closed before its end";

describe("eachChunk", () => {
  it("passes the chunks in order and resolves at the end", async () => {
    const readable = new PassThrough();
    const seen: string[] = [];
    const done = eachChunk(readable, (chunk) => seen.push(chunk.toString()), CLOSED);
    readable.write("a");
    readable.end("b");
    await done;
    expect(seen.join("")).toBe("ab");
    expect(readable.listenerCount("data")).toBe(0);
  });

  it("rejects with the readable's error, and when it closes before its end", async () => {
    const failing = new PassThrough();
    const failed = eachChunk(failing, () => undefined, CLOSED);
    failing.destroy(new Error("broke"));
    await expect(failed).rejects.toThrow("broke");

    const closing = new PassThrough();
    const closed = eachChunk(closing, () => undefined, CLOSED);
    closing.destroy();
    await expect(closed).rejects.toThrow(CLOSED);
    await expect(eachChunk(closing, () => undefined, CLOSED)).rejects.toThrow(CLOSED);
  });

  it("rejects with what the callback throws, delivered on a tick of its own, and stops listening", async () => {
    const readable = new PassThrough();
    readable.write("buffered before anyone listens");
    const thrown = new Error("refused");
    const done = eachChunk(
      readable,
      () => {
        throw thrown;
      },
      CLOSED,
    );
    await expect(done).rejects.toBe(thrown);
    expect(readable.listenerCount("data")).toBe(0);
    expect(readable.listenerCount("error")).toBe(0);
  });
});
