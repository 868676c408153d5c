import { GatewayRequestEvent } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { fitEvent, TRUNCATED_MARK } from "./fit";

const MIB = 1024 * 1024;
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("fitEvent", () => {
  it("returns an event that fits as it is", () => {
    const event = makeEvent();
    expect(fitEvent(event, MIB)).toBe(event);
  });

  it("cuts a giant model name to fit, marked, and keeps what accounts for the request", () => {
    const event = makeEvent({ model: "m".repeat(MIB), input_tokens: 7, cost_usd: 0.5 });
    const fitted = fitEvent(event, MIB - 512);
    expect(fitted).toBeDefined();
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(MIB - 512);
    // Cut no more than it had to: within the mark's size of the limit.
    expect(jsonBytes(fitted)).toBeGreaterThan(MIB - 512 - 64);
    expect(fitted?.model.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(fitted).toMatchObject({ id: event.id, input_tokens: 7, cost_usd: 0.5, path: event.path });
    expect(GatewayRequestEvent.safeParse(fitted).success).toBe(true);
  });

  it("cuts the longest field first and touches no other when that is enough", () => {
    const event = makeEvent({ model: "m".repeat(5_000), request_prompt: "p".repeat(40_000) });
    const fitted = fitEvent(event, 30_000);
    expect(fitted?.model).toBe(event.model);
    expect(fitted?.request_prompt?.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(30_000);
  });

  it("cuts several fields when one is not enough", () => {
    const event = makeEvent({ model: "m".repeat(20_000), path: `/${"p".repeat(20_000)}` });
    const fitted = fitEvent(event, 10_000);
    expect(fitted?.model.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(fitted?.path.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(10_000);
  });

  it("counts multi-byte and escaped characters as the wire does, never splitting a pair", () => {
    const event = makeEvent({ model: `${"😀".repeat(100_000)}${'"\u0001'.repeat(100_000)}` });
    const fitted = fitEvent(event, 200_000);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(200_000);
    expect(fitted?.model.endsWith(TRUNCATED_MARK)).toBe(true);
    // A lone surrogate would not survive UTF-8: it comes back as U+FFFD.
    const model = fitted?.model ?? "";
    expect(Buffer.from(model).toString()).toBe(model);
  });

  it("gives up when what it may not cut is already too large", () => {
    const event = makeEvent({ user_name: "n".repeat(20_000), model: "m".repeat(20_000) });
    expect(fitEvent(event, 10_000)).toBeUndefined();
  });
});
