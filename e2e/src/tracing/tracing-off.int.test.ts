import { randomBytes } from "node:crypto";
import { type AccessLogPage, Events } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ telemetry: true });
});
afterAll(async () => {
  await stack?.stop();
});

describe("without an OTLP endpoint there is no tracing", () => {
  it("a request carrying a client's traceparent: its event goes without trace context, its row without a trace id", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const traced: boolean[] = [];
    stack.nc.subscribe(Events.requests(account.owner.account_id), {
      callback: (error, msg) => {
        if (!error) traced.push(msg.headers?.has("traceparent") ?? false);
      },
    });

    const response = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        traceparent: `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`,
      },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);

    const logs = await readUntil(
      () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
      (page) => page.data.length === 1,
    );
    expect(logs.data[0]?.decision).toBe("allow");
    expect(logs.data[0]).not.toHaveProperty("trace_id");
    expect(traced).toEqual([false]);
  });
});
