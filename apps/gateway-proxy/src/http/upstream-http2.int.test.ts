import { eventually } from "@agentnet/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { answerOf, keptEvents, streamedRequest } from "../test-support/requests";
import { ANSWER_USAGE, ScriptedVendor } from "../test-support/vendor";

let harness: ProxyHarness | undefined;
let vendor: ScriptedVendor | undefined;

afterEach(async () => {
  await harness?.stop();
  await vendor?.stop();
  harness = undefined;
  vendor = undefined;
});

/** A vendor on https offering HTTP/2 and HTTP/1.1, and an account whose one provider it is. */
async function tlsVendorAccount(http2: boolean) {
  const kept = keptEvents();
  harness = await startProxyHarness(`h2-${http2}`, { upstreamHttp2: http2, publish: kept.publish });
  vendor = new ScriptedVendor();
  const url = await vendor.start({ tls: true });
  const account = harness.accountWith([
    // The test certificate's authority is nobody's: verification is off for this provider.
    { provider_id: "anthropic_api", upstream_url: url, key: "sk-ant", skip_tls_verification: true },
  ]);
  return { kept, vendor, proxyUrl: harness.proxy.url, ...account };
}

describe("HTTP/2 to an upstream that speaks it", () => {
  it("streams over HTTP/2, many streams at once on one connection, each with its usage and its row", async () => {
    const { kept, vendor, proxyUrl, token, accountId } = await tlsVendorAccount(true);
    const first = await answerOf(streamedRequest(proxyUrl, token, "anthropic"));
    expect(first.status).toBe(200);
    expect(first.body).toContain("message_stop");

    vendor.always = { kind: "hold" };
    const together = 20;
    const answers = Array.from({ length: together }, () =>
      answerOf(streamedRequest(proxyUrl, token, "anthropic")),
    );
    await eventually(() => vendor.open === together);
    vendor.release();
    expect((await Promise.all(answers)).every((answer) => answer.status === 200)).toBe(true);

    expect(vendor.httpVersions).toEqual(Array(together + 1).fill("2.0"));
    expect(vendor.connections).toBe(1);
    await eventually(() => kept.of(accountId).length === together + 1);
    for (const row of kept.of(accountId)) {
      expect(row).toMatchObject({
        status_code: 200,
        input_tokens: ANSWER_USAGE.input,
        output_tokens: ANSWER_USAGE.output,
        deny_reason: "",
      });
    }
  }, 30_000);

  it("stays on HTTP/1.1 when AGN_UPSTREAM_HTTP2 is off", async () => {
    const { vendor, proxyUrl, token } = await tlsVendorAccount(false);
    expect((await answerOf(streamedRequest(proxyUrl, token, "anthropic"))).status).toBe(200);
    expect(vendor.httpVersions).toEqual(["1.1"]);
  }, 30_000);
});
