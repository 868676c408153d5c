import { connect } from "node:net";
import type { PersonalAccessTokenGenerated } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

const SAFE = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
const safeHeadersOf = (headers: Headers) => ({
  "cache-control": headers.get("cache-control"),
  "x-content-type-options": headers.get("x-content-type-options"),
});

describe("every API answer is neither cached nor sniffed", () => {
  it("the answer holding a new token in plain", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<PersonalAccessTokenGenerated>(
      "POST",
      `/api/users/${owner.user_id}/tokens`,
      {
        token: owner.token,
        body: { name: "ci", expires_in: 30 },
      },
    );
    expect(created.status).toBe(200);
    expect(created.body.plain_token).toMatch(/^agn_/);
    expect(safeHeadersOf(created.headers)).toEqual(SAFE);
  });

  it("answers read back, refusals, unknown paths, the OpenAPI document and health", async () => {
    const owner = await api.bootstrap();
    const answers = await Promise.all([
      api.call("GET", "/api/accounts", { token: owner.token }),
      api.call("GET", "/api/accounts"),
      api.call("POST", "/api/users", { token: owner.token, body: { email: "not an email" } }),
      api.call("GET", "/api/nothing-here", { token: owner.token }),
      api.call("GET", "/api/openapi.json"),
      api.call("GET", "/healthz"),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 400, 404, 200, 200]);
    for (const answer of answers) expect(safeHeadersOf(answer.headers)).toEqual(SAFE);
  });

  it("closes a client that sends half its headers once the 10 s header bound has passed (checked every second)", async () => {
    const { port } = new URL(api.baseUrl);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => undefined);
    // Read what comes (the 408), or the socket never sees the server's close.
    socket.resume();
    await new Promise((resolve) => socket.once("connect", resolve));
    const started = Date.now();
    socket.write("GET /api/accounts HTTP/1.1\r\nHost: x\r\nAuthoriz");
    await new Promise((resolve) => socket.once("close", resolve));
    expect(Date.now() - started).toBeLessThan(12_000);
  }, 25_000);
});
