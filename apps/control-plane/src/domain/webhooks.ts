import { createHmac, randomBytes } from "node:crypto";
import type { Alert, NotificationEventType } from "@agentnet/contracts";

/**
 * A new signing secret: 32 random bytes, base64url, behind a prefix that says what it is (as
 * Stripe's `whsec_`), so one pasted into the wrong place is recognisable.
 */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`;

/** What a signing secret is sealed to: its account's setting, so a copy on another record does not open. */
export const signingSecretAad = (accountId: string): string => `notification-secret:${accountId}`;

/**
 * The `X-Agentnet-Signature` header of one attempt, Stripe's scheme: `t=<unix seconds>,v1=<hex>`
 * where v1 is HMAC-SHA256, keyed with the whole secret (UTF-8), over `<t>.<raw body>`. The time is
 * signed with the body, so a receiver that refuses old timestamps (5 minutes) cannot be sent a
 * captured delivery again later; each attempt is signed anew.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const digest = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}

/**
 * Waits between attempts: 5 attempts over about 10 minutes (15 s, 1 min, 3 min, 6 min), so a
 * receiver that restarts or deploys meanwhile still gets the event, and a dead one is given up on
 * while the alert is still news.
 */
export const RETRY_DELAYS_MS: readonly number[] = [15_000, 60_000, 180_000, 360_000];

/** How long to wait before attempt `attempt + 1`, or undefined when `attempt` was the last. */
export const retryDelayAfter = (attempt: number, delaysMs: readonly number[]): number | undefined =>
  delaysMs[attempt - 1];

/** What of an account's notification setting decides whether an alert is sent. */
export interface AlertScope {
  enabled: boolean;
  events: readonly NotificationEventType[];
  budget_rule_ids: readonly string[];
  policy_ids: readonly string[];
}

/**
 * Whether the account wants this alert: notifications on, the event type chosen, and for a budget
 * crossing a cap of a rule or policy in scope (no rule and no policy named: every cap). An id of a
 * rule or policy deleted since is simply never matched.
 */
export function wantsAlert(scope: AlertScope, alert: Alert): boolean {
  if (!scope.enabled || !scope.events.includes(alert.type)) return false;
  if (alert.type !== "budget.threshold_crossed") return true;
  if (scope.budget_rule_ids.length === 0 && scope.policy_ids.length === 0) return true;
  const { source, source_id } = alert.counter;
  return (source === "budget_rule" ? scope.budget_rule_ids : scope.policy_ids).includes(source_id);
}

const DAY_MS = 24 * 3600 * 1000;
/** The delivery log keeps an event at least this long. */
export const DELIVERY_RETENTION_MS = 30 * DAY_MS;

/**
 * Until when a delivery is kept. Its record is also what makes a budget crossing sent once, so
 * it lives until the counter's window has ended (nothing can cross it again then), and at least
 * the log's retention.
 */
export function deliveryExpiry(alert: Alert, nowMs: number): Date {
  const windowEnd = alert.type === "budget.threshold_crossed" ? Date.parse(alert.counter.window_end) : 0;
  return new Date(Math.max(nowMs + DELIVERY_RETENTION_MS, windowEnd + DAY_MS));
}
