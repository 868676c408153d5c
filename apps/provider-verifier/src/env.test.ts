import { describe, expect, it } from "vitest";
import { checkAllowance } from "./domain/allowance";
import { parseEnv } from "./env";

describe("parseEnv", () => {
  it("has production defaults: 10 s, 5 MiB, no private hosts", () => {
    expect(parseEnv({})).toMatchObject({
      VERIFY_TIMEOUT_MS: 10_000,
      VERIFY_MAX_BODY_BYTES: 5 * 1024 * 1024,
      VERIFY_ALLOW_PRIVATE_HOSTS: [],
    });
  });

  it("takes a list of exact hostnames outside production", () => {
    expect(
      parseEnv({ VERIFY_ALLOW_PRIVATE_HOSTS: "a.vendor.test, b.vendor.test", VERIFY_TIMEOUT_MS: "500" }),
    ).toMatchObject({
      VERIFY_ALLOW_PRIVATE_HOSTS: ["a.vendor.test", "b.vendor.test"],
      VERIFY_TIMEOUT_MS: 500,
    });
  });

  it("refuses the private-host allowance when NODE_ENV=production", () => {
    expect(() => parseEnv({ NODE_ENV: "production", VERIFY_ALLOW_PRIVATE_HOSTS: "a.vendor.test" })).toThrow(
      /VERIFY_ALLOW_PRIVATE_HOSTS: is for tests only/,
    );
  });

  it.each(["*.vendor.test", "*", "127.0.0.1", "::1", "localhost", "Vendor.Test"])(
    "refuses %j as an allowance entry",
    (host) => {
      expect(() => parseEnv({ VERIFY_ALLOW_PRIVATE_HOSTS: host })).toThrow(/VERIFY_ALLOW_PRIVATE_HOSTS/);
      expect(() => checkAllowance([host])).toThrow(/invalid private-host allowance/);
    },
  );

  it("refuses a nonsense timeout", () => {
    expect(() => parseEnv({ VERIFY_TIMEOUT_MS: "soon" })).toThrow(/VERIFY_TIMEOUT_MS/);
  });
});
