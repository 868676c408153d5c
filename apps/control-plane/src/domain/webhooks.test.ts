import { createHmac, timingSafeEqual } from "node:crypto";
import type { Alert } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import {
  deliveryExpiry,
  generateSigningSecret,
  RETRY_DELAYS_MS,
  retryDelayAfter,
  signatureHeader,
  wantsAlert,
} from "./webhooks";

/** The receiver's side, as docs/API.md tells it, written apart from the signer. */
function verify(secret: string, rawBody: string, header: string, nowSeconds: number): boolean {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${parts.t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const budgetAlert = (source: "budget_rule" | "llm_policy", sourceId: string, windowEnd: string): Alert => ({
  type: "budget.threshold_crossed",
  account_id: "acc-1",
  occurred_at: "2026-01-01T10:30:00.000Z",
  counter: {
    scope: "user",
    subject_id: "usr-1",
    source,
    source_id: sourceId,
    source_name: "cap",
    kind: "tokens",
    cap: 1000,
    used: 800,
    threshold: 80,
    window_seconds: 3600,
    window_start: "2026-01-01T10:00:00.000Z",
    window_end: windowEnd,
  },
});

const providerAlert: Alert = {
  type: "provider.credential_failed",
  account_id: "acc-1",
  occurred_at: "2026-01-01T10:30:00.000Z",
  provider: {
    id: "prv-1",
    name: "OpenAI",
    provider_id: "openai_api",
    upstream_status: 401,
    detected_by: "gateway_proxy",
  },
};

describe("signatures", () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify({ id: "evt_1", type: "budget.threshold_crossed" });

  it("verify with the documented procedure: HMAC-SHA256 of `<t>.<raw body>` keyed with the secret", () => {
    expect(verify(secret, body, signatureHeader(secret, body, 1_700_000_000), 1_700_000_010)).toBe(true);
  });

  it("fail for another body, another secret, or a timestamp more than 5 minutes off", () => {
    const header = signatureHeader(secret, body, 1_700_000_000);
    expect(verify(secret, `${body} `, header, 1_700_000_000)).toBe(false);
    expect(verify(generateSigningSecret(), body, header, 1_700_000_000)).toBe(false);
    expect(verify(secret, body, header, 1_700_000_301)).toBe(false);
  });

  it("secrets are random, prefixed whsec_, 256 bits", () => {
    const other = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(other).not.toBe(secret);
  });
});

describe("retries", () => {
  it("make 5 attempts over about 10 minutes, then stop", () => {
    const waits = [1, 2, 3, 4].map((attempt) => retryDelayAfter(attempt, RETRY_DELAYS_MS));
    expect(waits.every((wait) => wait !== undefined)).toBe(true);
    const total = waits.reduce<number>((sum, wait) => sum + (wait ?? 0), 0);
    expect(total).toBeGreaterThanOrEqual(9 * 60_000);
    expect(total).toBeLessThanOrEqual(11 * 60_000);
    expect(retryDelayAfter(5, RETRY_DELAYS_MS)).toBeUndefined();
  });
});

describe("which alerts an account wants", () => {
  const everything = {
    enabled: true,
    events: ["budget.threshold_crossed", "provider.credential_failed"] as const,
    budget_rule_ids: [],
    policy_ids: [],
  };
  const crossing = budgetAlert("budget_rule", "rule-1", "2026-01-01T11:00:00.000Z");

  it("every cap and provider when nothing narrows it", () => {
    expect(wantsAlert(everything, crossing)).toBe(true);
    expect(wantsAlert(everything, providerAlert)).toBe(true);
  });

  it("none while notifications are off, and only the event types chosen", () => {
    expect(wantsAlert({ ...everything, enabled: false }, crossing)).toBe(false);
    expect(wantsAlert({ ...everything, events: ["provider.credential_failed"] }, crossing)).toBe(false);
    expect(wantsAlert({ ...everything, events: ["budget.threshold_crossed"] }, providerAlert)).toBe(false);
  });

  it("only the caps of the rules and policies named, when some are", () => {
    const scoped = { ...everything, budget_rule_ids: ["rule-1"], policy_ids: ["pol-9"] };
    expect(wantsAlert(scoped, crossing)).toBe(true);
    expect(wantsAlert(scoped, budgetAlert("budget_rule", "rule-2", "2026-01-01T11:00:00.000Z"))).toBe(false);
    expect(wantsAlert(scoped, budgetAlert("llm_policy", "pol-9", "2026-01-01T11:00:00.000Z"))).toBe(true);
    // A policy id is not a budget rule id, even when they are equal strings.
    expect(wantsAlert(scoped, budgetAlert("llm_policy", "rule-1", "2026-01-01T11:00:00.000Z"))).toBe(false);
    expect(wantsAlert(scoped, providerAlert)).toBe(true);
  });
});

describe("delivery records", () => {
  const now = Date.parse("2026-01-01T10:30:00.000Z");

  it("are kept 30 days", () => {
    expect(deliveryExpiry(providerAlert, now).toISOString()).toBe("2026-01-31T10:30:00.000Z");
  });

  it("outlive their counter's window by a day, so a yearly cap's crossing is never sent twice", () => {
    const yearly = budgetAlert("budget_rule", "rule-1", "2027-01-01T00:00:00.000Z");
    expect(deliveryExpiry(yearly, now).toISOString()).toBe("2027-01-02T00:00:00.000Z");
  });
});
