import { MAX_ACCOUNT_CONFIG_BYTES } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { configSizeAfter } from "./config-size";

const documentOf = (bytes: number) => ({ text: "x".repeat(bytes - '{"text":""}'.length) });

describe("configSizeAfter", () => {
  it("adds a created document's size, and takes an updated one's old size off", () => {
    expect(configSizeAfter(1_000, undefined, documentOf(500))).toBe(1_500);
    expect(configSizeAfter(1_000, documentOf(400), documentOf(500))).toBe(1_100);
  });

  it("refuses a write that takes the account past MAX_ACCOUNT_CONFIG_BYTES with 422 account.config_too_large", () => {
    const full = MAX_ACCOUNT_CONFIG_BYTES - 100;
    expect(configSizeAfter(full, undefined, documentOf(100))).toBe(MAX_ACCOUNT_CONFIG_BYTES);
    expect(() => configSizeAfter(full, undefined, documentOf(101))).toThrow(
      expect.objectContaining({ status: 422, code: "account.config_too_large" }),
    );
  });

  it("lets a write that shrinks an account already past the bound through", () => {
    const over = MAX_ACCOUNT_CONFIG_BYTES + 1_000;
    expect(configSizeAfter(over, documentOf(600), documentOf(500))).toBe(over - 100);
  });
});
