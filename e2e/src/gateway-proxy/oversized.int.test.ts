import { maxPayloadOf } from "@agentnet/bus";
import { Events, type GatewayRequestEvent } from "@agentnet/contracts";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";

// Sizes NATS cannot carry (max_payload is 1 MiB) never end a service. Edge validation may refuse
// some of these requests before they reach the bus; whatever they are answered, the process must
// live on and answer the next request.

let stack: Stack;
beforeAll(async () => {
  // A proxy silent for a second is taken for dead: the stack's own proxy beats faster than that.
  stack = await startStack({
    proxy: { heartbeatMs: 100 },
    consumption: { admissionOrphanMs: 1_000, admissionSweepMs: 100 },
  });
});
afterAll(async () => {
  await stack?.stop();
});

const chat = (token: string, model: string) =>
  fetch(`${stack.proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });

const proxyStatus = async () => {
  const response = await fetch(`${stack.proxy.url}/status`);
  return {
    status: response.status,
    body: (await response.json()) as {
      events: { publishing: boolean; pending: number; truncated: number; unpublishable: number };
    },
  };
};

/** The status once the publisher has nothing left to send. */
async function settledStatus() {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await proxyStatus();
    if (status.body.events.pending === 0 || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every event of a request that reached the stream fits max_payload and says what it was about. */
function expectCarried(event: GatewayRequestEvent | undefined, model: string) {
  if (event === undefined) return;
  expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThan(1024 * 1024);
  // Cut, here or at the edge, whatever the mark says so.
  expect(event.model.length).toBeLessThan(model.length);
  expect(model.startsWith(event.model.slice(0, 100))).toBe(true);
}

describe("a request with a model name larger than NATS carries", () => {
  it("to a provider without a model list: the proxy lives on and serves the next request", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const giant = "m".repeat(1_100_000);

    const first = await chat(account.token, giant);
    expect(first.status).toBeLessThan(500);

    const next = await openaiClient(stack, account.token).chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(next.choices[0]?.message.content).toBe("Hello from upstream");
    const status = await settledStatus();
    expect(status.status).toBe(200);
    expect(status.body.events).toMatchObject({ publishing: true, pending: 0 });
    const events = await account.events.waitFor(1);
    expect(events.some((event) => event.model === "gpt-4o" && event.status_code === 200)).toBe(true);
    expectCarried(
      events.find((event) => event.model !== "gpt-4o"),
      giant,
    );
  });

  it("denied: its event is logged cut to fit (or dropped with a log), and /status stays 200", async () => {
    const account = await stack.newAccount();
    const giant = "d".repeat(1024 * 1024);

    const denied = await chat(account.token, giant);
    expect(denied.status).toBeGreaterThanOrEqual(400);
    expect(denied.status).toBeLessThan(500);

    const status = await settledStatus();
    expect(status.status).toBe(200);
    expect(status.body.events).toMatchObject({ publishing: true, pending: 0 });
    const [event] = account.events.events;
    expectCarried(event, giant);
    if (event?.model.endsWith("…[truncated]")) expect(status.body.events.truncated).toBeGreaterThan(0);

    await configure(stack, account).policy([account.openaiProvider.id]);
    const next = await chat(account.token, "gpt-4o");
    expect(next.status).toBe(200);
  });
});

describe("a lost proxy's admission too large to publish as an event", () => {
  it("is dropped with a log, and the admissions after it are still charged", async () => {
    const account = await stack.newAccount();
    const accountId = account.owner.account_id;
    const lostProxy = uniqueId("proxy");
    // Fits one admission message, but not an event with its Nats-Msg-Id header.
    const limit = maxPayloadOf(stack.nc);
    const bare = makeEvent({ account_id: accountId, model: "" });
    const model = "m".repeat(limit - 200 - Buffer.byteLength(JSON.stringify(bare)));
    const tooLarge = { ...bare, model };
    const fine = makeEvent({ account_id: accountId });
    stack.nc.publish(Events.proxyAdmitted(lostProxy), `${tooLarge.id} ${JSON.stringify(tooLarge)}`);
    stack.nc.publish(Events.proxyAdmitted(lostProxy), `${fine.id} ${JSON.stringify(fine)}`);

    const [charged] = await account.events.waitFor(1, 15_000);
    expect(charged?.id).toBe(fine.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(account.events.events.map((event) => event.id)).toEqual([fine.id]);
  });
});
