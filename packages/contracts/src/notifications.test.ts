import { describe, expect, it } from "vitest";
import { AlertMessage, NotificationSettingsBody, WebhookEvent } from "./notifications";

const issues = (result: { error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  (result.error?.issues ?? []).map((issue) => `${issue.path.join(".")}: ${issue.message}`);

describe("NotificationSettingsBody", () => {
  it("needs only a URL: every event type, thresholds 50, 80 and 100 %, every cap, enabled", () => {
    expect(NotificationSettingsBody.parse({ url: "https://hooks.example.com/agentnet" })).toEqual({
      url: "https://hooks.example.com/agentnet",
      enabled: true,
      events: ["budget.threshold_crossed", "provider.credential_failed"],
      thresholds: [50, 80, 100],
      budget_rule_ids: [],
      policy_ids: [],
    });
  });

  it("keeps thresholds ascending whatever order they are written in", () => {
    const body = NotificationSettingsBody.parse({ url: "https://h.example.com", thresholds: [100, 75, 90] });
    expect(body.thresholds).toEqual([75, 90, 100]);
  });

  it.each([
    [{ thresholds: [] }, "thresholds: at least one threshold"],
    [{ thresholds: [0] }, "thresholds.0: a threshold is at least 1 (%)"],
    [{ thresholds: [101] }, "thresholds.0: a threshold is at most 100 (%)"],
    [{ thresholds: [50.5] }, "thresholds.0: Invalid input: expected int, received number"],
    [{ thresholds: [80, 80] }, "thresholds.1: duplicate threshold 80"],
    [{ thresholds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, "thresholds: at most 10 thresholds"],
    [{ events: [] }, "events: at least one event type"],
    [{ events: ["budget.exceeded"] }, "events.0"],
  ])("refuses %j naming the field", (overrides, expected) => {
    const result = NotificationSettingsBody.safeParse({ url: "https://h.example.com", ...overrides });
    expect(result.success).toBe(false);
    expect(issues(result).join("\n")).toContain(expected);
  });

  it.each([
    ["ftp://h.example.com/", "must be an absolute http:// or https:// URL"],
    ["/relative", "must be an absolute http:// or https:// URL"],
    ["https://user:pass@h.example.com/", "must not hold a user name or password"],
    [`https://h.example.com/${"a".repeat(2_048)}`, "must be at most 2048 characters"],
  ])("refuses the URL %s", (url, message) => {
    expect(issues(NotificationSettingsBody.safeParse({ url }))).toContain(`url: ${message}`);
  });

  it.each([
    ["https://hooks.example.com/a\rb", "U+000D"],
    ["https://hooks.example.com/a\nb", "U+000A"],
    ["https://hooks.example.com/a\tb", "U+0009"],
    ["https://hooks.example.com/a\u0000b", "U+0000"],
    ["https://hooks.example.com/a b", "U+0020"],
    ["https://hooks.example.com/ab ", "U+0020"],
    ["https://hooks.example.com/a\u0085b", "U+0085"],
    ["https://hooks.example.com/a\u00a0b", "U+00A0"],
  ])("refuses %j, which the URL parser would read otherwise, naming %s", (url, character) => {
    expect(issues(NotificationSettingsBody.safeParse({ url }))).toEqual([
      `url: must not contain whitespace or control characters (${character})`,
    ]);
  });

  it("stores the URL as the parser reads it, which is where deliveries go", () => {
    expect(NotificationSettingsBody.parse({ url: "HTTPS://Example.COM:443/a/../b" }).url).toBe(
      "https://example.com/b",
    );
  });

  it("bounds the URL as stored: percent-encoding counts", () => {
    const url = `https://h.example.com/${"é".repeat(700)}`;
    expect(url.length).toBeLessThan(2_048);
    expect(issues(NotificationSettingsBody.safeParse({ url }))).toEqual([
      "url: must be at most 2048 characters",
    ]);
  });
});

describe("alerts", () => {
  const counter = {
    scope: "user",
    subject_id: "usr-1",
    source: "budget_rule",
    source_id: "rule-1",
    source_name: "team cap",
    kind: "tokens",
    cap: 1000,
    used: 800,
    threshold: 80,
    window_seconds: 3600,
    window_start: "2026-01-01T10:00:00.000Z",
    window_end: "2026-01-01T11:00:00.000Z",
  };

  it("carry a budget crossing with its key on the stream", () => {
    const message = {
      v: 1,
      key: "budget|acc-1|rule-1|80",
      alert: {
        type: "budget.threshold_crossed",
        account_id: "acc-1",
        occurred_at: "2026-01-01T10:30:00.000Z",
        counter,
      },
    };
    expect(AlertMessage.parse(message)).toEqual(message);
  });

  it("are sent with an event id, and a crossing must carry its counter", () => {
    const event = {
      id: "evt_1",
      type: "budget.threshold_crossed",
      account_id: "acc-1",
      occurred_at: "2026-01-01T10:30:00.000Z",
      counter,
    };
    expect(WebhookEvent.parse(event)).toEqual(event);
    expect(WebhookEvent.safeParse({ ...event, counter: undefined }).success).toBe(false);
  });
});
