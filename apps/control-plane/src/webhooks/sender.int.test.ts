import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postWebhook } from "./sender";

let server: Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? "");
    req.resume();
    req.on("end", () => {
      // "/slow" is never answered.
      if (req.url === "/moved") {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` });
        res.end();
      } else if (req.url !== "/slow") {
        res.writeHead(204);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (url: string, allowed: string[], timeoutMs = 2_000) =>
  postWebhook({
    url,
    body: "{}",
    headers: { "content-type": "application/json" },
    timeoutMs,
    allowance: parsePrivateUpstreamAllowance(allowed).allowance,
  });

describe("a webhook attempt", () => {
  it("reaches a receiver on a private address only where the allowance names it, by name or address", async () => {
    expect(await post(`http://localhost:${port}/named`, [`localhost:${port}`])).toEqual({
      kind: "answered",
      status: 204,
    });
    expect(await post(`http://localhost:${port}/by-address`, [`127.0.0.1:${port}`])).toEqual({
      kind: "answered",
      status: 204,
    });
    expect(await post(`http://localhost:${port}/other-port`, [`127.0.0.1:${port + 1}`])).toMatchObject({
      kind: "refused",
      reason: expect.stringMatching(/^localhost is the loopback address (127\.0\.0\.1|::1)/),
    });
    expect(seen).toEqual(["/named", "/by-address"]);
  });

  it("refuses cloud metadata and other link-local addresses without sending anything", async () => {
    expect(await post("http://169.254.169.254/latest/meta-data", [])).toEqual({
      kind: "refused",
      reason:
        "169.254.169.254 is the link_local address 169.254.169.254, which webhooks are not sent to (AGN_ALLOWED_PRIVATE_WEBHOOKS names the ones they are)",
    });
  });

  it("takes a redirect as the receiver's answer and does not follow it", async () => {
    expect(await post(`http://127.0.0.1:${port}/moved`, [`127.0.0.1:${port}`])).toEqual({
      kind: "answered",
      status: 302,
    });
    expect(seen).not.toContain("/elsewhere");
  });

  it("gives up on a receiver that does not answer within the deadline", async () => {
    const started = Date.now();
    expect(await post(`http://127.0.0.1:${port}/slow`, [`127.0.0.1:${port}`], 300)).toEqual({
      kind: "failed",
      reason: "no answer within 300 ms",
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("says why a host cannot be reached", async () => {
    expect(await post("http://no-such-host.invalid/", [])).toMatchObject({
      kind: "failed",
      reason: expect.stringContaining("cannot resolve no-such-host.invalid"),
    });
  });
});
