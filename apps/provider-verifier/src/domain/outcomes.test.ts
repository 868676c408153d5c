import { AppError, VERIFY_REFUSALS } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { refusalForFailure, refusalForStatus, withoutCredential } from "./outcomes";

describe("refusalForStatus", () => {
  it("accepts any 2xx", () => {
    expect(refusalForStatus(200, "h")).toBeUndefined();
    expect(refusalForStatus(204, "h")).toBeUndefined();
  });

  it.each([
    [401, VERIFY_REFUSALS.rejectedCredential, "the vendor rejected the credential (HTTP 401)"],
    [403, VERIFY_REFUSALS.rejectedCredential, "the vendor rejected the credential (HTTP 403)"],
    [500, VERIFY_REFUSALS.vendorOutage, "HTTP 500"],
    [503, VERIFY_REFUSALS.vendorOutage, "try again later"],
    [301, VERIFY_REFUSALS.badResponse, "redirects are not followed"],
    [307, VERIFY_REFUSALS.badResponse, "redirects are not followed"],
    [404, VERIFY_REFUSALS.badResponse, "HTTP 404"],
    [429, VERIFY_REFUSALS.badResponse, "HTTP 429"],
  ])("HTTP %i is a 422 %s", (status, code, message) => {
    const error = refusalForStatus(status, "api.vendor.test");
    expect(error).toMatchObject({ status: 422, code });
    expect(error?.message).toContain(message);
  });
});

describe("refusalForFailure", () => {
  it.each([
    [
      { kind: "unresolvable", host: "h", code: "ENOTFOUND" },
      VERIFY_REFUSALS.unresolvable,
      "does not resolve",
    ],
    [
      { kind: "unreachable", host: "h", code: "ECONNREFUSED" },
      VERIFY_REFUSALS.unreachable,
      "refused the connection",
    ],
    [{ kind: "tls", host: "h", code: "SELF_SIGNED_CERT_IN_CHAIN" }, VERIFY_REFUSALS.unreachable, "TLS"],
    [{ kind: "timeout", host: "h", timeoutMs: 5, phase: "response" }, VERIFY_REFUSALS.timeout, "within 5 ms"],
    [{ kind: "too_large", host: "h", limitBytes: 10 }, VERIFY_REFUSALS.badResponse, "more than 10 bytes"],
    [{ kind: "not_json", host: "h" }, VERIFY_REFUSALS.badResponse, "JSON"],
    [{ kind: "bad_shape", host: "h", why: "data: required" }, VERIFY_REFUSALS.badResponse, "data: required"],
  ] as const)("%j is a 422 %s", (failure, code, message) => {
    const error = refusalForFailure(failure);
    expect(error).toMatchObject({ status: 422, code });
    expect(error.message).toContain(message);
  });
});

describe("withoutCredential", () => {
  it("cuts the key out of a refusal message and keeps status and code", () => {
    const key = "sk-live-abcdef123";
    const scrubbed = withoutCredential(
      refusalForFailure({ kind: "unresolvable", host: `${key}.vendor.test`, code: "ENOTFOUND" }),
      key,
    );
    expect(scrubbed).toBeInstanceOf(AppError);
    expect(scrubbed).toMatchObject({ status: 422, code: VERIFY_REFUSALS.unresolvable });
    expect((scrubbed as AppError).message).toBe(
      "the listing host [redacted].vendor.test does not resolve (ENOTFOUND)",
    );
  });

  it("leaves other errors and very short keys alone", () => {
    const plain = new Error("boom sk-live-abcdef123");
    expect(withoutCredential(plain, "sk-live-abcdef123")).toBe(plain);
    const refusal = refusalForStatus(401, "h");
    expect(withoutCredential(refusal, "e")).toBe(refusal);
  });
});
