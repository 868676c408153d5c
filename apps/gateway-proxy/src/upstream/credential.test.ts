import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import { describe, expect, it } from "vitest";
import { tokenEndpointAllowance } from "./credential";

describe("tokenEndpointAllowance: the token endpoints a key may aim the proxy at follow the private-upstream rule", () => {
  const allowed = tokenEndpointAllowance(parsePrivateUpstreamAllowance(["127.0.0.1:4555"]).allowance);

  it("a loopback endpoint only where AGN_ALLOWED_PRIVATE_UPSTREAMS names it", () => {
    expect(allowed(new URL("http://127.0.0.1:4555/token"))).toBe(true);
    expect(allowed(new URL("http://127.0.0.1:4556/token"))).toBe(false);
    expect(allowed(new URL("https://169.254.169.254/token"))).toBe(false);
    expect(allowed(new URL("https://[::1]:4555/token"))).toBe(false);
  });

  it("a public address, but no name it would have to resolve", () => {
    expect(allowed(new URL("https://8.8.8.8/token"))).toBe(true);
    expect(allowed(new URL("https://metadata.google.internal/token"))).toBe(false);
  });

  it("anything when private upstreams are not refused", () => {
    expect(tokenEndpointAllowance(undefined)(new URL("http://localhost:9/token"))).toBe(true);
  });
});
