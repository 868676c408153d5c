import { describe, expect, it } from "vitest";
import { isRetryableStatus, networkError, retryAfterMs } from "./retry";

describe("isRetryableStatus", () => {
  it("retries overload, rate limits and server failures", () => {
    for (const status of [429, 500, 502, 503, 504, 529]) expect(isRetryableStatus(status)).toBe(true);
  });

  it("never retries a client error, nor an answer", () => {
    for (const status of [200, 400, 401, 403, 404, 413, 422, 501])
      expect(isRetryableStatus(status)).toBe(false);
  });
});

describe("retryAfterMs", () => {
  it("reads retry-after-ms first, then retry-after in seconds or as a date", () => {
    expect(retryAfterMs({ "retry-after-ms": "1500", "retry-after": "9" })).toBe(1500);
    expect(retryAfterMs({ "retry-after": "2" })).toBe(2000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, now)).toBe(3000);
  });

  it("is 0 without a usable value", () => {
    expect(retryAfterMs({})).toBe(0);
    expect(retryAfterMs({ "retry-after": "soon" })).toBe(0);
    expect(retryAfterMs({ "retry-after": "-1" })).toBe(0);
  });
});

describe("networkError", () => {
  it("names a timeout to the first byte, a refused connection and a dropped one", () => {
    expect(networkError({ code: "UND_ERR_HEADERS_TIMEOUT" })).toBe("timeout");
    expect(networkError({ code: "ECONNREFUSED" })).toBe("connect_failed");
    expect(networkError({ code: "UND_ERR_SOCKET" })).toBe("upstream_closed");
  });
});
