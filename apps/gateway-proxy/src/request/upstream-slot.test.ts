import { describe, expect, it } from "vitest";
import { UPSTREAM_BUSY, upstreamBusy } from "./upstream-slot";

describe("a request that got no slot at its upstream origin in time", () => {
  it("is answered as its vendor answers when overloaded: Anthropic's 529, 503 for OpenAI and Google", () => {
    expect(upstreamBusy("anthropic", 5_000).status).toBe(529);
    expect(upstreamBusy("openai", 5_000).status).toBe(503);
    expect(upstreamBusy("gemini", 5_000).status).toBe(503);
  });

  it("says to come back after the wait, in whole seconds and at least one", () => {
    expect(upstreamBusy("openai", 5_000).headers).toEqual({ "retry-after": "5" });
    expect(upstreamBusy("openai", 1_200).headers).toEqual({ "retry-after": "2" });
    expect(upstreamBusy("openai", 0).headers).toEqual({ "retry-after": "1" });
  });

  it("rows its reason and lets another candidate provider take the request", () => {
    expect(upstreamBusy("openai", 5_000)).toMatchObject({
      reason: UPSTREAM_BUSY,
      denyReason: UPSTREAM_BUSY,
      elsewhere: true,
    });
  });
});
