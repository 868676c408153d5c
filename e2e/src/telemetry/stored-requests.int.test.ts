import { request } from "@agentnet/bus";
import { TelemetryIngest } from "@agentnet/contracts";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(async () => {
  await stack?.stop();
});

const asked = (events: ReturnType<typeof makeEvent>[]) => ({
  requests: events.map(({ account_id, id, timestamp }) => ({ account_id, id, timestamp })),
});

describe("agn.telemetry.stored_requests", () => {
  it("names the events the stream delivered, once everything it held is ingested", async () => {
    const accountId = uniqueId("acc");
    const stored = [makeEvent({ account_id: accountId }), makeEvent({ account_id: accountId })];
    const absent = makeEvent({ account_id: accountId });
    await stack.publish(stored);
    const reply = await request(stack.nc, TelemetryIngest.storedRequests, asked([...stored, absent]));
    expect(reply.decided).toBe(true);
    expect(reply.stored.sort()).toEqual(stored.map((event) => event.id).sort());
  });

  it("answers undecided while the ingest has not caught up with the stream", async () => {
    await stack.telemetry.stop();
    const pending = makeEvent({ account_id: uniqueId("acc") });
    await stack.publish([pending]);
    const reply = await request(stack.nc, TelemetryIngest.storedRequests, asked([pending]));
    expect(reply).toEqual({ decided: false, stored: [] });
  });

  it("refuses a question without events", async () => {
    await expect(request(stack.nc, TelemetryIngest.storedRequests, { requests: [] })).rejects.toMatchObject({
      status: 400,
    });
  });
});
