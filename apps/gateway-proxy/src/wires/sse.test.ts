import { describe, expect, it } from "vitest";
import { lastSseEventEnd, nextSseEventEnd, SSE } from "./sse";

const end = (text: string) => lastSseEventEnd(Buffer.from(text));

describe("nextSseEventEnd: one event of a batch relayed near a cap", () => {
  it("ends each event after its blank line, LF or CRLF, and a partial one at the end", () => {
    const bytes = Buffer.from("data: a\n\ndata: b\r\n\r\ndata: c");
    expect(nextSseEventEnd(bytes, 0)).toBe(9);
    expect(nextSseEventEnd(bytes, 9)).toBe(20);
    expect(nextSseEventEnd(bytes, 20)).toBe(bytes.length);
  });
});

describe("lastSseEventEnd: where a capped stream's relay may cut", () => {
  it("is the end of a chunk that ends with an event, with LF or CRLF line ends", () => {
    expect(end('data: {"a":1}\n\n')).toBe(15);
    expect(end('data: {"a":1}\r\n\r\n')).toBe(17);
    expect(end('data: {"a":1}\r\n\n')).toBe(16);
  });

  it("is the last blank line of a chunk that ends inside an event", () => {
    expect(end('data: {"a":1}\n\ndata: {"b"')).toBe(15);
    expect(end('data: {"a":1}\r\n\r\ndata: {"b"')).toBe(17);
    expect(end('data: {"a":1}\n\ndata: {"b":2}\n')).toBe(15);
  });

  it("is -1 while no event is complete", () => {
    expect(end('data: {"a"')).toBe(-1);
    expect(end("\n")).toBe(-1);
    expect(end("")).toBe(-1);
  });
});

describe("SSE.reader().midEvent: whether an event of the proxy's may follow what was relayed", () => {
  it("is true inside a line or between an event's lines, false after its blank line", () => {
    const reader = SSE.reader();
    const sink = { data: () => {} };
    const after = (text: string) => {
      reader.push(Buffer.from(text), sink);
      return reader.midEvent;
    };
    expect(reader.midEvent).toBe(false);
    expect(after("event: message_delta\ndata: {")).toBe(true);
    expect(after('"a":1}\n')).toBe(true);
    expect(after("\n")).toBe(false);
    expect(after('data: {"b":2}\r\n\r\n')).toBe(false);
  });
});
