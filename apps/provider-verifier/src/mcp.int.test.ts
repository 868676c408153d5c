import { request } from "@agentnet/bus";
import { MCP_VERIFY_REFUSALS, type VerifyMcpServerRequest } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectRefusal,
  type Harness,
  PRIVATE_HOST,
  REFUSED_HOST,
  startHarness,
  UNTRUSTED_HOST,
} from "./test-support/harness";
import { GOOD_KEY, mcpCalls } from "./test-support/vendors";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ timeoutMs: 1_500, maxBodyBytes: 64 * 1024 });
});
afterAll(async () => {
  await h?.stop();
});

const verify = (overrides: Partial<VerifyMcpServerRequest> & { url: string }) =>
  request(h.nc, h.endpoints.verifyMcpServer, {
    credential: { header_name: "X-Api-Key", value: GOOD_KEY },
    skip_tls_verification: false,
    ...overrides,
  });

describe("verifyMcpServer", () => {
  it("initializes, lists the tools with the server's credential and ends its session", async () => {
    mcpCalls.length = 0;
    await expect(verify({ url: h.upstream("mcp.vendor.test", "/mcp") })).resolves.toEqual({
      outcome: "verified",
      tools: 2,
    });
    await expect
      .poll(() => mcpCalls)
      .toEqual(["initialize", "notifications/initialized", "tools/list", "DELETE"]);
    expect(h.vendors.seenBy("mcp.vendor.test").every((r) => r.headers["x-api-key"] === GOOD_KEY)).toBe(true);
  });

  it("stores unverified a per-member or OAuth server that refuses the check, which carries no credential of theirs", async () => {
    await expect(
      verify({
        url: h.upstream("mcp.vendor.test", "/mcp"),
        credential: undefined,
        credential_not_sent: "per_member_credential",
      }),
    ).resolves.toEqual({ outcome: "unverified", reason: "per_member_credential" });
    // Anything else is refused as for any server.
    await expectRefusal(
      verify({
        url: h.upstream("outage.vendor.test", "/mcp"),
        credential: undefined,
        credential_not_sent: "oauth_client_credentials",
      }),
      MCP_VERIFY_REFUSALS.outage,
      /HTTP 500/,
    );
  });

  it("refuses a credential the server rejects, an outage, a server that is not one and one that cannot be reached", async () => {
    await expectRefusal(
      verify({
        url: h.upstream("mcp.vendor.test", "/mcp"),
        credential: { header_name: "X-Api-Key", value: "wrong" },
      }),
      MCP_VERIFY_REFUSALS.rejectedCredential,
      /rejected the credential \(HTTP 401\)/,
    );
    await expectRefusal(
      verify({ url: h.upstream("outage.vendor.test", "/mcp") }),
      MCP_VERIFY_REFUSALS.outage,
      /HTTP 500/,
    );
    await expectRefusal(
      verify({ url: h.upstream("garbage.vendor.test", "/mcp") }),
      MCP_VERIFY_REFUSALS.badResponse,
      /did not answer as an MCP server/,
    );
    await expectRefusal(
      verify({ url: h.upstream("gone.vendor.test", "/mcp") }),
      MCP_VERIFY_REFUSALS.badResponse,
      /HTTP 404/,
    );
    await expectRefusal(
      verify({ url: h.upstream(REFUSED_HOST, "/mcp") }),
      MCP_VERIFY_REFUSALS.unreachable,
      /refused/,
    );
    await expectRefusal(
      verify({ url: h.upstream(UNTRUSTED_HOST, "/mcp") }),
      MCP_VERIFY_REFUSALS.unreachable,
      /TLS with untrusted.vendor.test failed/,
    );
    await expectRefusal(
      verify({ url: "https://nowhere.example.test/mcp" }),
      MCP_VERIFY_REFUSALS.unresolvable,
      /does not resolve/,
    );
    await expectRefusal(
      verify({ url: h.upstream("slow.vendor.test", "/mcp") }),
      MCP_VERIFY_REFUSALS.timeout,
      /1500 ms/,
    );
  });

  it("stores unverified, dialing nothing, a plain-http URL, one with TLS checks off, and a private address", async () => {
    const before = h.vendors.seen.length;
    await expect(verify({ url: "http://mcp.vendor.test/mcp" })).resolves.toEqual({
      outcome: "unverified",
      reason: "plain_http",
    });
    await expect(
      verify({ url: h.upstream("mcp.vendor.test", "/mcp"), skip_tls_verification: true }),
    ).resolves.toEqual({
      outcome: "unverified",
      reason: "tls_verification_skipped",
    });
    await expect(verify({ url: h.upstream(PRIVATE_HOST, "/mcp") })).resolves.toEqual({
      outcome: "unverified",
      reason: "private_address",
    });
    expect(h.vendors.seen.length).toBe(before);
  });
});
