import { TEST_SEALING_KEY } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { parseEnv } from "./env";

const required = { AGN_SEALING_KEY: TEST_SEALING_KEY };

describe("the proxy's environment", () => {
  it("refuses private upstreams unless told otherwise, and allows none by default", () => {
    const env = parseEnv(required);
    expect(env.AGN_REFUSE_PRIVATE_UPSTREAMS).toBe(true);
    expect(env.AGN_ALLOWED_PRIVATE_UPSTREAMS).toEqual([]);
    expect(
      parseEnv({ ...required, AGN_REFUSE_PRIVATE_UPSTREAMS: "false" }).AGN_REFUSE_PRIVATE_UPSTREAMS,
    ).toBe(false);
  });

  it("reads the allowance as a comma list and names an entry it cannot read", () => {
    expect(
      parseEnv({ ...required, AGN_ALLOWED_PRIVATE_UPSTREAMS: "10.0.0.0/8, 127.0.0.1:8091,LLM.lan:8000" })
        .AGN_ALLOWED_PRIVATE_UPSTREAMS,
    ).toEqual(["10.0.0.0/8", "127.0.0.1:8091", "llm.lan:8000"]);
    expect(() => parseEnv({ ...required, AGN_ALLOWED_PRIVATE_UPSTREAMS: "127.0.0.1:8091,*.lan" })).toThrow(
      /AGN_ALLOWED_PRIVATE_UPSTREAMS: "\*\.lan" is none of a range/,
    );
  });

  it("bounds what a client may hold of the listener: 10 s for headers, 30 s for a request, 5 s idle, 4,096 connections", () => {
    expect(parseEnv(required)).toMatchObject({
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
      HTTP_MAX_CONNECTIONS: 4_096,
    });
  });

  it("cools a provider down after 3 failures within 30 s, for 30 s, unless told otherwise", () => {
    expect(parseEnv(required)).toMatchObject({
      AGN_COOLDOWN_FAILURES: 3,
      AGN_COOLDOWN_WINDOW_MS: 30_000,
      AGN_COOLDOWN_MS: 30_000,
    });
    expect(parseEnv({ ...required, AGN_COOLDOWN_FAILURES: "5", AGN_COOLDOWN_MS: "60000" })).toMatchObject({
      AGN_COOLDOWN_FAILURES: 5,
      AGN_COOLDOWN_MS: 60_000,
    });
  });

  it("lets 4,096 requests at once reach one upstream origin, over HTTP/2 where the vendor speaks it, and one more wait 5 s", () => {
    expect(parseEnv(required)).toMatchObject({
      AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: 4_096,
      AGN_UPSTREAM_WAIT_MS: 5_000,
      AGN_UPSTREAM_HTTP2: true,
    });
    expect(
      parseEnv({
        ...required,
        AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: "64",
        AGN_UPSTREAM_WAIT_MS: "0",
        AGN_UPSTREAM_HTTP2: "false",
      }),
    ).toMatchObject({
      AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: 64,
      AGN_UPSTREAM_WAIT_MS: 0,
      AGN_UPSTREAM_HTTP2: false,
    });
    expect(() => parseEnv({ ...required, AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: "0" })).toThrow(
      /AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN/,
    );
  });
});
