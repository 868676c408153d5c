import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus } from "@agentnet/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi } from "../testing";

describe("serving the built dashboard", () => {
  let dir: string;
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let stopBus: () => Promise<void>;
  const script = `console.log(${JSON.stringify("x".repeat(4_000))});`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "agn-dashboard-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(
      join(dir, "index.html"),
      '<!doctype html><script type="module" src="/assets/index-B1x2y3z4.js"></script>',
    );
    writeFileSync(join(dir, "assets", "index-B1x2y3z4.js"), script);
    const nc = await connectTestBus("api-gateway");
    stopBus = () => nc.drain();
    api = await startTestApi({ nc, logger: createLogger("test", "silent"), dashboardDir: dir });
  });
  afterAll(async () => {
    await api.stop();
    await stopBus();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the page with a same-origin CSP, no framing, nosniff, no referrer, revalidated", async () => {
    for (const path of ["/", "/some/deep/link"]) {
      const response = await request(`${api.url}${path}`);
      expect(response.statusCode).toBe(200);
      const csp = String(response.headers["content-security-policy"]);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(response.headers).toMatchObject({
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
      });
      await response.body.text();
    }
  });

  it("caches hashed assets for a year and compresses them", async () => {
    const response = await request(`${api.url}/assets/index-B1x2y3z4.js`, {
      headers: { "accept-encoding": "gzip" },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(response.headers["content-encoding"]).toBe("gzip");
    const compressed = Buffer.from(await response.body.arrayBuffer());
    expect(compressed.length).toBeLessThan(script.length / 10);
  });
});
