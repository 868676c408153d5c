import { describe, expect, it } from "vitest";
import { ibanValid, luhnValid, redactPii } from "./redaction";

describe("redactPii", () => {
  it("redacts emails", () => {
    expect(redactPii("write to jane.doe+ai@corp.example.co.uk today")).toBe("write to [EMAIL] today");
  });

  it("redacts phone numbers written like phone numbers", () => {
    expect(redactPii("call +1 (415) 555-0132 now")).toBe("call [PHONE] now");
    expect(redactPii("ring 030 1234 5678")).toBe("ring [PHONE]");
    expect(redactPii("+44 20 7946 0958")).toBe("[PHONE]");
  });

  it("keeps plain numbers, dates and versions", () => {
    const text = "order 12345678 on 2024-05-01, version 1.2.3, 42 items, id 4111111111111112";
    expect(redactPii(text)).toBe(text);
  });

  it("redacts card numbers that pass Luhn only", () => {
    expect(luhnValid("4111 1111 1111 1111")).toBe(true);
    expect(luhnValid("4111 1111 1111 1112")).toBe(false);
    expect(redactPii("card 4111 1111 1111 1111 exp")).toBe("card [CARD] exp");
    expect(redactPii("card 5500-0000-0000-0004.")).toBe("card [CARD].");
  });

  it("redacts IBANs that pass mod-97 only", () => {
    expect(ibanValid("DE89 3704 0044 0532 0130 00")).toBe(true);
    expect(ibanValid("DE89 3704 0044 0532 0130 01")).toBe(false);
    expect(redactPii("pay DE89 3704 0044 0532 0130 00 please")).toBe("pay [IBAN] please");
    expect(redactPii("iban GB82WEST12345698765432")).toBe("iban [IBAN]");
  });

  it("redacts API keys and bearer tokens", () => {
    expect(redactPii("key sk-proj-abcDEF1234567890abcdef1234")).toBe("key [SECRET]");
    expect(redactPii("sk-ant-api03-AbCdEf0123456789AbCdEf")).toBe("[SECRET]");
    expect(redactPii("token agn_0123456789abcdefghijABCDEFGHIJ0123456789")).toBe("token [SECRET]");
    expect(redactPii("AKIAIOSFODNN7EXAMPLE")).toBe("[SECRET]");
    expect(redactPii("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345")).toBe(
      "Authorization: Bearer [SECRET]",
    );
    expect(redactPii('{"api_key": "hunter2hunter2"}')).toBe('{"api_key": "[SECRET]"}');
  });
});
