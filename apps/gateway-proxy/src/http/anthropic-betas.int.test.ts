import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { uniqueId } from "@agentnet/testkit";
import { anthropicMessage } from "@agentnet/testkit/anthropic-messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";

/**
 * Which of the caller's `anthropic-beta` values reach the vendor (docs/API.md, "Claude betas per
 * upstream"): the provider's own list when it names one, else the catalog entry's (Vertex lists
 * some, Anthropic none, so every one passes there).
 */

// What Claude Code sends: two betas Vertex's catalog list names, one it does not, and one so new
// no list knows it.
const SENT =
  "claude-code-20250219,interleaved-thinking-2025-05-14,context-1m-2025-08-07,brand-new-2026-12-01";

let harness: ProxyHarness;
let vendor: Server;
let vendorUrl: string;
/** The `anthropic-beta` header of each request the vendor received, by the account in its path. */
const seenBetas = new Map<string, string | undefined>();

beforeAll(async () => {
  // A vendor answering Claude on Anthropic's and Vertex's paths alike; each account's provider
  // points at its own path prefix, so the test can tell whose request it saw.
  vendor = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const account = (req.url ?? "").split("/")[1] ?? "";
      seenBetas.set(account, req.headers["anthropic-beta"] as string | undefined);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          anthropicMessage({
            model: "claude-sonnet-4-5",
            usage: { input_tokens: 3, output_tokens: 2 },
            texts: ["hi"],
          }),
        ),
      );
    });
  });
  await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  harness = await startProxyHarness("anthropic-betas-test");
});

afterAll(async () => {
  await harness?.stop();
  vendor?.closeAllConnections();
  vendor?.close();
});

/**
 * Sends SENT on /v1/messages through an account whose one provider is of `catalogId` with
 * `betas` as its list (none when undefined), and answers the header the vendor saw.
 */
async function betasReaching(catalogId: "anthropic_api" | "vertex_api", betas?: string[]) {
  const accountId = uniqueId("acc");
  const base = `${vendorUrl}/${accountId}`;
  const { token } = harness.accountWith(
    [
      {
        provider_id: catalogId,
        upstream_url: catalogId === "vertex_api" ? `${base}/v1/projects/p/locations/us-east5` : base,
        // A bare Vertex access token, or an Anthropic key: both are sent as they are.
        key: "ya29.test-token",
        ...(betas ? { anthropic_betas: betas } : {}),
      },
    ],
    { accountId },
  );
  const res = await fetch(`${harness.proxy.url}/v1/messages`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": SENT,
    },
    body: JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
  expect(res.status).toBe(200);
  expect(seenBetas.has(accountId)).toBe(true);
  return seenBetas.get(accountId);
}

describe("anthropic-beta per upstream", () => {
  it("passes every beta to Anthropic, whose catalog entry lists none", async () => {
    expect(await betasReaching("anthropic_api")).toBe(SENT);
  });

  it("passes to Vertex only the betas its catalog entry lists", async () => {
    expect(await betasReaching("vertex_api")).toBe("interleaved-thinking-2025-05-14,context-1m-2025-08-07");
  });

  it("passes to Vertex the provider's own list instead of the catalog's when it names one", async () => {
    expect(await betasReaching("vertex_api", ["brand-new-2026-12-01", "context-1m-2025-08-07"])).toBe(
      "context-1m-2025-08-07,brand-new-2026-12-01",
    );
  });

  it("narrows Anthropic to the provider's list too", async () => {
    expect(await betasReaching("anthropic_api", ["claude-code-20250219"])).toBe("claude-code-20250219");
  });

  it("drops the header when the provider's list is empty", async () => {
    expect(await betasReaching("vertex_api", [])).toBeUndefined();
  });
});
