import { describe, expect, it } from "vitest";
import { classifyAddress, firstNonPublic, isIpLiteral, parseIPv6 } from "./address";

describe("classifyAddress", () => {
  it.each([
    ["8.8.8.8", "public"],
    ["93.184.216.34", "public"],
    ["1.1.1.1", "public"],
    ["100.63.255.255", "public"],
    ["100.128.0.0", "public"],
    ["172.15.255.255", "public"],
    ["172.32.0.0", "public"],
    ["223.255.255.255", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "link_local"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.51.100.1", "documentation"],
    ["203.0.113.7", "documentation"],
    ["198.18.0.1", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
  ])("IPv4 %s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:82a::200e", "public"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1%eth0", "link_local"],
    ["fe80::abcd", "link_local"],
    ["fc00::1", "private"],
    ["fd12:3456:789a::1", "private"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001:0:4136:e378::1", "reserved"], // Teredo
    ["2002:c000:0204::1", "reserved"], // 6to4
    ["100::1", "reserved"],
    ["::7f00:1", "reserved"], // IPv4-compatible
    ["64:ff9b:1::1", "private"],
    ["4000::1", "reserved"], // outside 2000::/3
  ])("IPv6 %s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:10.1.2.3", "private"],
    ["0:0:0:0:0:ffff:a9fe:a9fe", "link_local"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::808:808", "public"],
  ])("an IPv6 address embedding IPv4 (%s) is classified by the IPv4: %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    "",
    "example.com",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "1::2::3",
    "12345::",
    "::ffff:1.2.3",
  ])("%j is not an address", (text) => {
    expect(classifyAddress(text)).toBe("invalid");
  });

  it("parses the compressed and the full IPv6 forms to the same value", () => {
    expect(parseIPv6("2001:db8::1")).toBe(parseIPv6("2001:0db8:0000:0000:0000:0000:0000:0001"));
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toBe(0x00010002000300040005000600070008n);
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeUndefined();
  });
});

describe("firstNonPublic", () => {
  it("refuses a name when any one of its addresses is not public", () => {
    expect(firstNonPublic(["93.184.216.34", "10.0.0.5"])).toEqual({ address: "10.0.0.5", cls: "private" });
    expect(firstNonPublic(["93.184.216.34", "2606:4700::1"])).toBeUndefined();
  });

  it("tells IP literals from names", () => {
    expect(isIpLiteral("10.0.0.1")).toBe(true);
    expect(isIpLiteral("::1")).toBe(true);
    expect(isIpLiteral("api.openai.com")).toBe(false);
  });
});
