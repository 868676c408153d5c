import { AppError, endpoint } from "@agentnet/contracts";
import { connectTestBus, uniqueSubject } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { NatsConnection } from "./index";
import { request, serve } from "./index";

const makeEcho = () =>
  endpoint(
    uniqueSubject("test.echo"),
    z.object({ text: z.string().min(1) }),
    z.object({ echoed: z.string() }),
  );

describe("request/reply over NATS", () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connectTestBus();
  });
  afterAll(async () => {
    await nc.drain();
  });

  it("returns the parsed reply and strips fields outside the contract", async () => {
    const echo = makeEcho();
    serve(nc, echo, ({ text }) => ({ echoed: text, secret: "never leaves" }) as { echoed: string }, {
      queue: "test",
    });
    await expect(request(nc, echo, { text: "hi" })).resolves.toEqual({ echoed: "hi" });
  });

  it("carries an AppError across the hop with status, code, message and details", async () => {
    const echo = makeEcho();
    serve(
      nc,
      echo,
      () => {
        throw new AppError(409, "settings.exists", "already there", [{ path: "endpoint", message: "taken" }]);
      },
      { queue: "test" },
    );
    const error = await request(nc, echo, { text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      status: 409,
      code: "settings.exists",
      message: "already there",
      details: [{ path: "endpoint", message: "taken" }],
    });
  });

  it("answers an invalid request with 400 and field details, without calling the handler", async () => {
    const echo = makeEcho();
    let called = false;
    serve(
      nc,
      echo,
      () => {
        called = true;
        return { echoed: "" };
      },
      { queue: "test" },
    );
    const error = await request(nc, echo, { text: "" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, details: [{ path: "text" }] });
    expect(called).toBe(false);
  });

  it("hides unexpected errors behind a 500 and reports them to the service", async () => {
    const echo = makeEcho();
    const reported: unknown[] = [];
    serve(
      nc,
      echo,
      () => {
        throw new Error("database exploded");
      },
      { queue: "test", onUnexpectedError: (error) => reported.push(error) },
    );
    const error = await request(nc, echo, { text: "x" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, code: "internal", message: "internal error" });
    expect(reported).toHaveLength(1);
  });

  it("maps no responders to 503 and a silent service to 504", async () => {
    await expect(request(nc, makeEcho(), { text: "x" })).rejects.toMatchObject({ status: 503 });
    const silent = makeEcho();
    nc.subscribe(silent.subject, { callback: () => undefined });
    await expect(request(nc, silent, { text: "x" }, { timeoutMs: 200 })).rejects.toMatchObject({
      status: 504,
    });
  });

  it("answers 413 for a reply larger than the bus carries, reports it, and keeps serving", async () => {
    const echo = makeEcho();
    const reported: unknown[] = [];
    serve(nc, echo, ({ text }) => ({ echoed: text === "big" ? "x".repeat(1_100_000) : text }), {
      queue: "test",
      onUnexpectedError: (error) => reported.push(error),
    });
    const error = await request(nc, echo, { text: "big" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large" });
    expect((error as Error).message).toMatch(/answer .* too large to carry/);
    expect(reported).toHaveLength(1);
    await expect(request(nc, echo, { text: "next" })).resolves.toEqual({ echoed: "next" });
  });

  it("refuses a request larger than the bus carries with 413, before sending it", async () => {
    const echo = makeEcho();
    let called = false;
    serve(
      nc,
      echo,
      ({ text }) => {
        called = true;
        return { echoed: text };
      },
      { queue: "test" },
    );
    const error = await request(nc, echo, { text: "x".repeat(1_100_000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large" });
    expect(called).toBe(false);
  });

  it("reports a reply that cannot be sent instead of leaving an unhandled rejection", async () => {
    const loose = endpoint(uniqueSubject("test.loose"), z.object({}), z.unknown());
    const reported: unknown[] = [];
    serve(nc, loose, () => ({ count: 1n }), {
      queue: "test",
      onUnexpectedError: (error) => reported.push(error),
    });
    await expect(request(nc, loose, {}, { timeoutMs: 300 })).rejects.toMatchObject({ status: 504 });
    expect(reported).toEqual([expect.any(TypeError)]);
  });

  it("delivers each request to one member of a queue group", async () => {
    const echo = makeEcho();
    const served: string[] = [];
    for (const replica of ["a", "b"]) {
      serve(
        nc,
        echo,
        ({ text }) => {
          served.push(replica);
          return { echoed: text };
        },
        { queue: "replicas" },
      );
    }
    await Promise.all(Array.from({ length: 20 }, (_, i) => request(nc, echo, { text: String(i) })));
    expect(served).toHaveLength(20);
  });
});
