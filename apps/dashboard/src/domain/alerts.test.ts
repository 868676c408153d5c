import type { WebhookEvent } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { describeEvent, parseThresholds } from "./alerts";

describe("parseThresholds", () => {
  it("reads whole percents separated by commas or spaces, with or without %, ascending", () => {
    expect(parseThresholds("100, 50 80%")).toEqual({ thresholds: [50, 80, 100] });
  });

  it.each([
    ["", "Give at least one threshold, e.g. 80."],
    ["0", "0 is not a whole percent from 1 to 100."],
    ["101", "101 is not a whole percent from 1 to 100."],
    ["80.5", "80.5 is not a whole percent from 1 to 100."],
    ["eighty", "eighty is not a whole percent from 1 to 100."],
    ["80, 80", "80 % is listed twice."],
    ["1 2 3 4 5 6 7 8 9 10 11", "At most 10 thresholds."],
  ])("refuses %j saying why", (text, error) => {
    expect(parseThresholds(text)).toEqual({ error });
  });
});

describe("describeEvent", () => {
  const names = (id: string) => ({ "usr-1": "ada@example.com" })[id] ?? id;

  it("says which cap of whom crossed which threshold, in the cap's unit", () => {
    const event: WebhookEvent = {
      id: "evt_1",
      type: "budget.threshold_crossed",
      account_id: "acc-1",
      occurred_at: "2031-01-01T10:30:00.000Z",
      counter: {
        scope: "user",
        subject_id: "usr-1",
        source: "budget_rule",
        source_id: "rule-1",
        source_name: "team cap",
        kind: "usd",
        cap: 5,
        used: 4.5,
        threshold: 80,
        window_seconds: 3600,
        window_start: "2031-01-01T10:00:00.000Z",
        window_end: "2031-01-01T11:00:00.000Z",
      },
    };
    expect(describeEvent(event, names)).toBe(
      "80 % of budget rule team cap for user ada@example.com: $4.50 of $5.00",
    );
  });

  it("names the provider whose credential the vendor refused", () => {
    const event: WebhookEvent = {
      id: "evt_2",
      type: "provider.credential_failed",
      account_id: "acc-1",
      occurred_at: "2031-01-01T10:30:00.000Z",
      provider: {
        id: "prv-1",
        name: "OpenAI",
        provider_id: "openai_api",
        upstream_status: 401,
        detected_by: "gateway_proxy",
      },
    };
    expect(describeEvent(event, names)).toBe("Provider OpenAI: the vendor answered 401 (credential refused)");
  });
});
