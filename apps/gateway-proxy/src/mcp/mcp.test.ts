import { generateSealingKey, parseSealingKeys } from "@agentnet/sealing";
import { describe, expect, it } from "vitest";
import { calledTool, grantedToolList } from "./grants";
import { joinedRequestId, parseClientMessage, splitJoinedRequestId } from "./jsonrpc";
import { openSessionId, sealSessionId } from "./session-token";
import { SseEventRewriter } from "./sse";

describe("parseClientMessage", () => {
  it("tells requests, notifications and responses apart", () => {
    expect(parseClientMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toMatchObject({ kind: "request" });
    expect(parseClientMessage('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toMatchObject({
      kind: "notification",
    });
    expect(parseClientMessage('{"jsonrpc":"2.0","id":"s1","result":{}}')).toMatchObject({ kind: "response" });
    expect(parseClientMessage('{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}')).toMatchObject({
      kind: "response",
    });
  });

  it("names the problem of anything else, with the id when one can be read", () => {
    expect(parseClientMessage("{")).toEqual({ id: null, code: -32700, message: expect.any(String) });
    expect(parseClientMessage("[]")).toMatchObject({ id: null, code: -32600 });
    expect(parseClientMessage('{"jsonrpc":"2.0","id":5}')).toMatchObject({ id: 5, code: -32600 });
    expect(parseClientMessage('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}')).toMatchObject({
      id: null,
      code: -32600,
    });
  });
});

describe("the tool grants of one server", () => {
  it("reads the tool a call names", () => {
    expect(calledTool({ name: "echo", arguments: {} })).toBe("echo");
    expect(calledTool({ name: "" })).toBeUndefined();
    expect(calledTool(undefined)).toBeUndefined();
  });

  it("keeps only granted tools in a list, and the rest of the result as it was", () => {
    const result = { tools: [{ name: "a" }, { name: "b" }, "junk"], nextCursor: "c2" };
    expect(grantedToolList(result, (tool) => tool === "b")).toEqual({
      tools: [{ name: "b" }],
      nextCursor: "c2",
    });
    expect(grantedToolList({ other: 1 }, () => false)).toEqual({ other: 1 });
  });
});

describe("sealed session ids", () => {
  const keys = parseSealingKeys(generateSealingKey());
  const owner = { accountId: "acc", userId: "usr", serverId: "srv" };

  it("opens for the caller and server it was sealed to, and for nobody else", () => {
    const token = sealSessionId(keys, owner, "upstream-session-1");
    expect(token).toMatch(/^agn1\.[A-Za-z0-9_-]+$/);
    expect(openSessionId(keys, owner, token)).toBe("upstream-session-1");
    expect(openSessionId(keys, { ...owner, userId: "other" }, token)).toBeUndefined();
    expect(openSessionId(keys, { ...owner, serverId: "other" }, token)).toBeUndefined();
    expect(openSessionId(parseSealingKeys(generateSealingKey()), owner, token)).toBeUndefined();
  });

  it("opens nothing from a token that is not one", () => {
    for (const token of [
      "upstream-session-1",
      "agn1.",
      "agn1.!!",
      `agn1.${Buffer.from("{}").toString("base64url")}`,
    ]) {
      expect(openSessionId(keys, owner, token)).toBeUndefined();
    }
  });
});

describe("SseEventRewriter", () => {
  const upper = new SseEventRewriter((data) => (data.includes("x") ? data.toUpperCase() : undefined));
  const feed = (rewriter: SseEventRewriter, parts: string[]) =>
    parts.map((part) => rewriter.push(new TextEncoder().encode(part))).join("") + rewriter.end();

  it("rewrites whole events however the stream is cut, keeping their id and event lines", () => {
    const out = feed(upper, ["id: 1\nevent: message\nda", 'ta: {"x":1}\n', "\n", "data: keep\n\n"]);
    expect(out).toBe('id: 1\nevent: message\ndata: {"X":1}\n\ndata: keep\n\n');
  });

  it("passes events it does not rewrite byte for byte, CRLF included, and a cut last event as it is", () => {
    const rewriter = new SseEventRewriter(() => undefined);
    expect(feed(rewriter, [": ping\r\n\r\n", "data: a\r\n\r\n", "data: cut"])).toBe(
      ": ping\r\n\r\ndata: a\r\n\r\ndata: cut",
    );
  });
});

describe("the ids of servers' requests on /mcp", () => {
  it("carry the server's place and its own id, number or string, there and back", () => {
    for (const id of [0, 42, "req-1", "agn~1~2", ""]) {
      expect(splitJoinedRequestId(joinedRequestId(3, id))).toEqual({ index: 3, id });
    }
  });

  it("name no server for any other id", () => {
    for (const id of [null, 7, "req-1", "agn~x~1", "agn~1~", "agn~1~{bad", "agn~1~[1]", "agn~12345~1"]) {
      expect(splitJoinedRequestId(id)).toBeUndefined();
    }
  });
});
