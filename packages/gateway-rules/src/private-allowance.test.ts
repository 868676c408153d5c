import { describe, expect, it } from "vitest";
import {
  parsePrivateUpstreamAllowance,
  privateUpstreamRefusal,
  type UpstreamConnection,
} from "./private-allowance";

const allowance = (...entries: string[]) => {
  const parsed = parsePrivateUpstreamAllowance(entries);
  expect(parsed.problems).toEqual([]);
  return parsed.allowance;
};
const NONE = allowance();
const at = (address: string, port = 80, host = address): UpstreamConnection => ({ host, port, address });

describe("addresses refused to connect to unless allowed", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["fd00::1", "private"],
    ["169.254.169.254", "link_local"],
    ["fe80::1", "link_local"],
    ["100.64.0.1", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a9fe:a9fe", "link_local"],
    ["224.0.0.1", "multicast"],
  ])("%s (%s)", (address, cls) => {
    expect(privateUpstreamRefusal(at(address), NONE)).toBe(cls);
  });

  it("connects to public addresses", () => {
    for (const address of ["8.8.8.8", "104.18.6.192", "2606:4700::6810:84e5", "::ffff:8.8.8.8"]) {
      expect(privateUpstreamRefusal(at(address), NONE)).toBeUndefined();
    }
  });

  it("sees every spelling of loopback in an upstream URL as 127.0.0.1 or its IPv6 forms (WHATWG URL parsing)", () => {
    const hosts = [
      "http://2130706433/api",
      "http://0x7f000001/",
      "http://127.1/",
      "http://0177.0.0.1/",
      "http://%31%32%37.0.0.1/",
      "http://[::ffff:127.0.0.1]/",
      "http://[0:0:0:0:0:0:0:1]/",
      "http://0.0.0.0/",
      "http://[::]/",
    ].map((url) => new URL(url).hostname.replace(/^\[|\]$/g, ""));
    expect(hosts).toEqual([
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "::ffff:7f00:1",
      "::1",
      "0.0.0.0",
      "::",
    ]);
    for (const host of hosts) expect(privateUpstreamRefusal(at(host), NONE)).toBeDefined();
  });
});

describe("AGN_ALLOWED_PRIVATE_UPSTREAMS", () => {
  it("allows a range at any port, and nothing outside it", () => {
    const lan = allowance("10.0.0.0/8", "fd00::/8");
    expect(privateUpstreamRefusal(at("10.9.8.7", 8000), lan)).toBeUndefined();
    expect(privateUpstreamRefusal(at("::ffff:10.9.8.7", 443), lan)).toBeUndefined();
    expect(privateUpstreamRefusal(at("fd12::5"), lan)).toBeUndefined();
    expect(privateUpstreamRefusal(at("192.168.0.1"), lan)).toBe("private");
    expect(privateUpstreamRefusal(at("127.0.0.1"), lan)).toBe("loopback");
  });

  it("allows a bare address at any port, and only that address", () => {
    const one = allowance("192.168.1.20");
    expect(privateUpstreamRefusal(at("192.168.1.20", 11434), one)).toBeUndefined();
    expect(privateUpstreamRefusal(at("192.168.1.21", 11434), one)).toBe("private");
  });

  it("allows an address and port only at that port, the IPv4-mapped spelling included", () => {
    const demo = allowance("127.0.0.1:8091", "[::1]:8000");
    expect(privateUpstreamRefusal(at("127.0.0.1", 8091), demo)).toBeUndefined();
    expect(privateUpstreamRefusal(at("::ffff:7f00:1", 8091), demo)).toBeUndefined();
    expect(privateUpstreamRefusal(at("127.0.0.1", 8080), demo)).toBe("loopback");
    expect(privateUpstreamRefusal(at("::1", 8000), demo)).toBeUndefined();
    expect(privateUpstreamRefusal(at("::1", 8091), demo)).toBe("loopback");
  });

  it("allows a name and port whatever the name resolves to, but not the same address under another name", () => {
    const named = allowance("LLM.lan:8000");
    expect(privateUpstreamRefusal(at("10.0.0.5", 8000, "llm.lan"), named)).toBeUndefined();
    expect(privateUpstreamRefusal(at("10.0.0.5", 8000, "llm.lan."), named)).toBeUndefined();
    expect(privateUpstreamRefusal(at("10.0.0.5", 8001, "llm.lan"), named)).toBe("private");
    expect(privateUpstreamRefusal(at("10.0.0.5", 8000, "other.lan"), named)).toBe("private");
    expect(privateUpstreamRefusal(at("10.0.0.5", 8000), named)).toBe("private");
  });

  it("names every entry it cannot read", () => {
    const { problems } = parsePrivateUpstreamAllowance([
      "10.0.0.0/33",
      "fd00::/129",
      "llm.lan",
      "llm.lan:0",
      "llm.lan:99999",
      "*.lan:80",
      "[llm.lan]:80",
      "a:b:c",
      "10.0.0.0/8",
    ]);
    expect(problems).toHaveLength(8);
    expect(problems[0]).toMatch(/"10\.0\.0\.0\/33" is none of a range/);
  });
});
