import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A raw connection to the proxy: `closedAfter` resolves with the ms from `started` to its close. */
async function rawConnection() {
  const { port } = new URL(stack.proxy.url);
  const socket = connect(Number(port), "127.0.0.1");
  let received = "";
  socket.on("data", (chunk) => {
    received += chunk.toString();
  });
  socket.on("error", () => undefined);
  await new Promise((resolve) => socket.once("connect", resolve));
  const started = Date.now();
  const closedAfter = new Promise<number>((resolve) =>
    socket.once("close", () => resolve(Date.now() - started)),
  );
  return { socket, closedAfter, received: () => received };
}

describe("the proxy's listener", () => {
  it("closes a client that sends half its headers once the 10 s header bound has passed", async () => {
    const client = await rawConnection();
    client.socket.write(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer agn_",
    );
    const closedAfter = await client.closedAfter;
    expect(closedAfter).toBeGreaterThanOrEqual(9_500);
    expect(closedAfter).toBeLessThan(12_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  }, 20_000);

  it("closes a keep-alive connection idle for 5 s (and the 1 s node adds)", async () => {
    const client = await rawConnection();
    client.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const closedAfter = await client.closedAfter;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*Keep-Alive: timeout=5/);
    expect(closedAfter).toBeGreaterThanOrEqual(4_900);
    expect(closedAfter).toBeLessThan(7_000);
  }, 15_000);

  it("says nosniff on its own answers: refusals, unknown paths, health and status", async () => {
    const answers = await Promise.all([
      fetch(`${stack.proxy.url}/v1/chat/completions`, { method: "POST", body: "{}" }),
      fetch(`${stack.proxy.url}/v1/nothing-here`),
      fetch(`${stack.proxy.url}/healthz`),
      fetch(`${stack.proxy.url}/status`),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([401, 404, 200, 200]);
    for (const answer of answers) expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
