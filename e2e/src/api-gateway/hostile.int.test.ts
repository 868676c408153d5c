import { connect } from "node:net";
import type { Group } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

describe("hostile input at the API", () => {
  it("answers a malformed percent-encoding in a path parameter with 400, not 500", async () => {
    const { token } = await api.bootstrap();
    for (const path of ["/api/agent-network/providers/%ff", "/api/groups/%E0%A4%A", "/api/users/%"]) {
      const response = await api.call("GET", path, { token });
      expect(response.status, path).toBe(400);
      expect(response.body).toMatchObject({ code: 400, message: expect.stringMatching(/percent-encoding/) });
    }
  });

  it("answers renaming a group to a taken name with 409, as create does", async () => {
    const { token } = await api.bootstrap();
    const create = (name: string) => api.call<Group>("POST", "/api/groups", { token, body: { name } });
    await create("first");
    const second = await create("second");
    const rename = await api.call("PUT", `/api/groups/${second.body.id}`, { token, body: { name: "first" } });
    expect(rename.status).toBe(409);
    expect(rename.body).toMatchObject({ code: 409 });
  });

  it("refuses names too long or with control characters, and bodies that are not UTF-8", async () => {
    const { token } = await api.bootstrap();
    for (const name of ["x".repeat(300), "nul\u0000byte"]) {
      const response = await api.call("POST", "/api/groups", { token, body: { name } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ details: [{ path: "name" }] });
    }
    const invalid = await fetch(`${api.baseUrl}/api/groups`, {
      method: "POST",
      headers: {
        authorization: `Token ${token}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ message: "request body is not valid UTF-8" });
  });

  it("echoes a plain x-request-id and replaces one that is long or not plain", async () => {
    const plain = await api.call("GET", "/api/accounts", { headers: { "x-request-id": "trace-1.2:3_x" } });
    expect(plain.headers.get("x-request-id")).toBe("trace-1.2:3_x");
    for (const hostile of ["a".repeat(129), "two words", "<script>"]) {
      const response = await api.call("GET", "/api/accounts", { headers: { "x-request-id": hostile } });
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("refuses an unauthenticated client before reading its body", async () => {
    const { port } = new URL(api.baseUrl);
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        // Announces a megabyte and sends none of it: the answer must not wait for the body.
        socket.write(
          "POST /api/groups HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: 1048576\r\n\r\n",
        );
      });
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
        if (text.includes("\r\n\r\n")) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
