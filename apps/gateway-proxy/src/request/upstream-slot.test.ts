import { describe, expect, it } from "vitest";
import { anthropic as anthropicWire } from "../wires/anthropic";
import { gemini as geminiWire } from "../wires/gemini";
import { openai as openAiWire } from "../wires/openai";
import { UPSTREAM_BUSY, upstreamBusy } from "./upstream-slot";

describe("a request that got no slot at its upstream origin in time", () => {
  it("is answered as its vendor answers when overloaded: Anthropic's 529, 503 for OpenAI and Google", () => {
    expect(upstreamBusy(anthropicWire, 5_000).status).toBe(529);
    expect(upstreamBusy(openAiWire, 5_000).status).toBe(503);
    expect(upstreamBusy(geminiWire, 5_000).status).toBe(503);
  });

  it("says to come back after the wait, in whole seconds and at least one", () => {
    expect(upstreamBusy(openAiWire, 5_000).headers).toEqual({ "retry-after": "5" });
    expect(upstreamBusy(openAiWire, 1_200).headers).toEqual({ "retry-after": "2" });
    expect(upstreamBusy(openAiWire, 0).headers).toEqual({ "retry-after": "1" });
  });

  it("rows its reason and lets another candidate provider take the request", () => {
    expect(upstreamBusy(openAiWire, 5_000)).toMatchObject({
      reason: UPSTREAM_BUSY,
      denyReason: UPSTREAM_BUSY,
      elsewhere: true,
    });
  });
});
