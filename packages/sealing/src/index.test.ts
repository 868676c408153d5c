import { describe, expect, it } from "vitest";
import { generateSealingKey, parseSealingKeys, SealingError, seal, unseal } from "./index";

describe("sealing", () => {
  const key = parseSealingKeys(generateSealingKey());

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
    const other = parseSealingKeys(generateSealingKey());
    expect(() => unseal(other, sealed, "acct/prov")).toThrow(/sealed with key/);
    expect(() => unseal(key, sealed, "acct/other")).toThrow(SealingError);
    const tampered = { ...sealed, ct: Buffer.from("garbage").toString("base64") };
    expect(() => unseal(key, tampered, "acct/prov")).toThrow(SealingError);
  });

  it("fails clearly on a missing or malformed key, accepts base64 and hex", () => {
    expect(() => parseSealingKeys(undefined)).toThrow(/AGN_SEALING_KEY is not set/);
    expect(() => parseSealingKeys("c2hvcnQ=")).toThrow(/32 bytes/);
    expect(parseSealingKeys("ab".repeat(32)).current.bytes).toHaveLength(32);
  });

  it("seals with the first key of a ring and opens with any of them", () => {
    const oldText = generateSealingKey();
    const newText = generateSealingKey();
    const before = seal(parseSealingKeys(oldText), "sk-old", "a");
    const ring = parseSealingKeys(`${newText}, ${oldText}`);
    expect(unseal(ring, before, "a")).toBe("sk-old");
    const after = seal(ring, "sk-new", "a");
    expect(after.kid).toBe(parseSealingKeys(newText).current.kid);
    expect(() => unseal(parseSealingKeys(oldText), after, "a")).toThrow(/configured keys are/);
  });
});
