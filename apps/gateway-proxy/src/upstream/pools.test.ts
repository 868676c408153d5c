import { describe, expect, it } from "vitest";
import { upstreamTarget } from "./pools";

describe("upstreamTarget", () => {
  it("maps /v1 paths onto the provider's prefix", () => {
    expect(upstreamTarget("https://api.openai.com/v1", "/v1/chat/completions", "").pathWithQuery).toBe(
      "/v1/chat/completions",
    );
    expect(upstreamTarget("https://api.openai.com", "/v1/chat/completions", "").pathWithQuery).toBe(
      "/v1/chat/completions",
    );
    expect(upstreamTarget("http://127.0.0.1:9000/openai/", "/v1/messages", "").pathWithQuery).toBe(
      "/openai/v1/messages",
    );
    const azure = upstreamTarget(
      "https://x.openai.azure.com/openai/v1?api-version=preview",
      "/v1/responses",
      "a=1",
    );
    expect(azure).toMatchObject({
      origin: "https://x.openai.azure.com",
      pathWithQuery: "/openai/v1/responses?api-version=preview&a=1",
    });
  });
});
