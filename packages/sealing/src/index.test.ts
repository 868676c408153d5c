import { describe, expect, it } from "vitest";
import { generateSealingKey, parseSealingKey, SealingError, seal, unseal } from "./index";

describe("sealing", () => {
  const key = parseSealingKey(generateSealingKey());

  it("round-trips a secret and never stores it in clear", () => {
    const sealed = seal(key, "sk-live-123", "acct/prov");
    expect(JSON.stringify(sealed)).not.toContain("sk-live-123");
    expect(unseal(key, sealed, "acct/prov")).toBe("sk-live-123");
  });

  it("uses a fresh IV each time", () => {
    expect(seal(key, "x", "a").iv).not.toBe(seal(key, "x", "a").iv);
  });

  it("refuses another key, another owner and a tampered ciphertext", () => {
    const sealed = seal(key, "secret", "acct/prov");
    const other = parseSealingKey(generateSealingKey());
    expect(() => unseal(other, sealed, "acct/prov")).toThrow(/sealed with key/);
    expect(() => unseal(key, sealed, "acct/other")).toThrow(SealingError);
    const tampered = { ...sealed, ct: Buffer.from("garbage").toString("base64") };
    expect(() => unseal(key, tampered, "acct/prov")).toThrow(SealingError);
  });

  it("fails clearly on a missing or malformed key, accepts base64 and hex", () => {
    expect(() => parseSealingKey(undefined)).toThrow(/AGN_SEALING_KEY is not set/);
    expect(() => parseSealingKey("c2hvcnQ=")).toThrow(/32 bytes/);
    expect(parseSealingKey("ab".repeat(32)).bytes).toHaveLength(32);
  });
});
