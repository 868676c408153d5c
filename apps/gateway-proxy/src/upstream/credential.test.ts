import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import { describe, expect, it } from "vitest";
import { tokenEndpointAllowance } from "./credential";

describe("tokenEndpointAllowance: a key may aim the proxy only at token endpoints AGN_ALLOWED_PRIVATE_UPSTREAMS names", () => {
  const allowed = tokenEndpointAllowance(parsePrivateUpstreamAllowance(["127.0.0.1:4555"]).allowance);

  it("a loopback endpoint only where AGN_ALLOWED_PRIVATE_UPSTREAMS names it", () => {
    expect(allowed(new URL("http://127.0.0.1:4555/token"))).toBe(true);
    expect(allowed(new URL("http://127.0.0.1:4556/token"))).toBe(false);
    expect(allowed(new URL("https://169.254.169.254/token"))).toBe(false);
    expect(allowed(new URL("https://[::1]:4555/token"))).toBe(false);
  });

  it("no public address or name the allowance does not name", () => {
    expect(allowed(new URL("https://8.8.8.8/token"))).toBe(false);
    expect(allowed(new URL("https://metadata.google.internal/token"))).toBe(false);
    const named = tokenEndpointAllowance(
      parsePrivateUpstreamAllowance(["token.lan:8443", "203.0.113.7:443"]).allowance,
    );
    expect(named(new URL("https://token.lan:8443/token"))).toBe(true);
    expect(named(new URL("https://token.lan/token"))).toBe(false);
    expect(named(new URL("https://203.0.113.7/token"))).toBe(true);
  });

  it("anything when private upstreams are not refused", () => {
    expect(tokenEndpointAllowance(undefined)(new URL("http://localhost:9/token"))).toBe(true);
  });
});
