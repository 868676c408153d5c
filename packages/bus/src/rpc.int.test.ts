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
