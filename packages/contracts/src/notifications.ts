import { z } from "zod";
import { BudgetRule } from "./budget-rules";
import { Empty, Id, IdList, ResourceTimestamps, Timestamp } from "./common";
import { DimensionKind } from "./consumption";
import { Policy } from "./policies";
import { MAX_URL_LENGTH } from "./sizes";
import { byCaller, endpoint } from "./subjects";
import { absoluteUrl } from "./urls";

/**
 * Alerts by signed webhook (not in the spec, which leaves events and webhooks out): an account
 * names one URL, and agentnet POSTs it a signed JSON event when a cap's counter crosses a
 * threshold of its cap in a window, or when a vendor refuses a provider's credential.
 */
export const NotificationEventType = z.enum(["budget.threshold_crossed", "provider.credential_failed"]);
export type NotificationEventType = z.infer<typeof NotificationEventType>;

/** Thresholds an account may set, each a percent of a cap. */
export const MAX_THRESHOLDS = 10;
export const DEFAULT_THRESHOLDS: readonly number[] = [50, 80, 100];

/** The header carrying a delivery's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = "x-agentnet-signature";

const unique =
  <T>(what: string) =>
  (items: readonly T[], ctx: z.RefinementCtx) => {
    const seen = new Set<T>();
    items.forEach((item, index) => {
      if (seen.has(item))
        ctx.addIssue({ code: "custom", path: [index], message: `duplicate ${what} ${item}` });
      seen.add(item);
    });
  };

/**
 * Where events go: an absolute http(s) URL without a user name or password (the URL is shown to
 * every reader of the configuration; the signing secret is what proves a delivery). Stored as the
 * parser reads it (`HTTPS://Example.COM:443/a/../b` is `https://example.com/b`), so the URL shown is
 * the one deliveries go to; the length bound is the stored URL's.
 */
export const WebhookUrl = absoluteUrl(/^https?$/, "must be an absolute http:// or https:// URL")
  .refine((text) => {
    if (!URL.canParse(text)) return true;
    const url = new URL(text);
    return url.username === "" && url.password === "";
  }, "must not hold a user name or password")
  .overwrite((text) => (URL.canParse(text) ? new URL(text).href : text))
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`);

/** Percents of a cap, ascending; 100 is the cap itself. */
const Thresholds = z
  .array(z.number().int().min(1, "a threshold is at least 1 (%)").max(100, "a threshold is at most 100 (%)"))
  .min(1, "at least one threshold")
  .max(MAX_THRESHOLDS, `at most ${MAX_THRESHOLDS} thresholds`)
  .superRefine(unique("threshold"))
  .transform((items) => [...items].sort((a, b) => a - b));

/**
 * POST and PUT body (PUT replaces the whole setting, so the same defaults apply). Empty
 * budget_rule_ids and policy_ids together watch every cap; otherwise only the caps of the rules
 * and policies named.
 */
export const NotificationSettingsBody = z.object({
  url: WebhookUrl,
  enabled: z.boolean().default(true),
  events: z
    .array(NotificationEventType)
    .min(1, "at least one event type")
    .superRefine(unique("event type"))
    .default([...NotificationEventType.options]),
  thresholds: Thresholds.default([...DEFAULT_THRESHOLDS]),
  budget_rule_ids: IdList.default([]),
  policy_ids: IdList.default([]),
});
export type NotificationSettingsBody = z.infer<typeof NotificationSettingsBody>;

/** The account's notification setting; the signing secret is never returned after it was made. */
export const NotificationSettings = z.object({
  url: z.string(),
  enabled: z.boolean(),
  events: z.array(NotificationEventType),
  thresholds: z.array(z.number().int()),
  budget_rule_ids: z.array(Id),
  policy_ids: z.array(Id),
  ...ResourceTimestamps.shape,
});
export type NotificationSettings = z.infer<typeof NotificationSettings>;

/** The answer of a create or a rotation: the only time the signing secret is shown. */
export const NotificationSettingsWithSecret = NotificationSettings.extend({
  signing_secret: z.string(),
});
export type NotificationSettingsWithSecret = z.infer<typeof NotificationSettingsWithSecret>;

/** The counter of a `budget.threshold_crossed` event: one cap, in one window. */
export const BudgetCounterAlert = z.object({
  /** Whose usage the counter counts: one user, or one group across all its members. */
  scope: DimensionKind,
  /** The user id or group id. */
  subject_id: Id,
  source: z.enum(["llm_policy", "budget_rule"]),
  /** The policy or budget rule that sets the cap, and its name. */
  source_id: Id,
  source_name: z.string(),
  kind: z.enum(["tokens", "usd", "tool_calls"]),
  /** Tokens (input + output), USD or MCP tool calls, as `kind` says. */
  cap: z.number().min(0),
  used: z.number().min(0),
  /** The percent of `cap` crossed. */
  threshold: z.number().int().min(1).max(100),
  window_seconds: z.number().int().min(1),
  window_start: Timestamp,
  window_end: Timestamp,
});
export type BudgetCounterAlert = z.infer<typeof BudgetCounterAlert>;

/** The provider of a `provider.credential_failed` event. */
export const ProviderCredentialAlert = z.object({
  id: Id,
  name: z.string(),
  /** The catalog provider type (`openai_api`, ...). */
  provider_id: z.string(),
  /** What the vendor answered: 401. */
  upstream_status: z.number().int(),
  /** Who saw it: a gateway proxy forwarding a member's request. */
  detected_by: z.literal("gateway_proxy"),
});
export type ProviderCredentialAlert = z.infer<typeof ProviderCredentialAlert>;

export const BudgetThresholdCrossed = z.object({
  type: z.literal("budget.threshold_crossed"),
  account_id: Id,
  occurred_at: Timestamp,
  counter: BudgetCounterAlert,
});
export const ProviderCredentialFailed = z.object({
  type: z.literal("provider.credential_failed"),
  account_id: Id,
  occurred_at: Timestamp,
  provider: ProviderCredentialAlert,
});

/** What happened, as its producer saw it; the notifier gives it an id when it records it. */
export const Alert = z.discriminatedUnion("type", [BudgetThresholdCrossed, ProviderCredentialFailed]);
export type Alert = z.infer<typeof Alert>;

/** A webhook's JSON body: the alert with its event id (the same on every attempt). */
export const WebhookEvent = z.discriminatedUnion("type", [
  BudgetThresholdCrossed.extend({ id: z.string() }),
  ProviderCredentialFailed.extend({ id: z.string() }),
]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

/**
 * One alert on the `AGN_ALERTS` stream. `key` names what it is about once and for all (a cap's
 * counter, window and threshold; a provider and hour): the notifier records each key once, so a
 * producer may publish an alert again (after a restart) and the account still gets it once.
 */
export const AlertMessage = z.object({ v: z.literal(1), key: z.string().min(1).max(1_024), alert: Alert });
export type AlertMessage = z.infer<typeof AlertMessage>;

/** `agn.proxy.credential_rejected`: a vendor answered a proxied request 401 (core NATS, no ack). */
export const CredentialRejectedNotice = z.object({
  v: z.literal(1),
  account_id: Id,
  provider_id: Id,
  upstream_status: z.number().int(),
  at: Timestamp,
});
export type CredentialRejectedNotice = z.infer<typeof CredentialRejectedNotice>;

export const DeliveryStatus = z.enum(["pending", "retrying", "delivered", "failed", "refused"]);
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

/** One event's delivery, as the log lists it. */
export const NotificationDelivery = z.object({
  /** The event id, as its body and `X-Agentnet-Delivery` carry it. */
  id: z.string(),
  type: NotificationEventType,
  /**
   * pending: not tried yet; retrying: failed, tried again at `next_attempt_at`; delivered: the
   * receiver answered 2xx; failed: every attempt failed; refused: not sent, by rule (`last_error`).
   */
  status: DeliveryStatus,
  attempts: z.number().int().min(0),
  last_error: z.string(),
  /** The receiver's status code of the last attempt; null when none answered. */
  response_status: z.number().int().nullable(),
  created_at: Timestamp,
  last_attempt_at: Timestamp.nullable(),
  next_attempt_at: Timestamp.nullable(),
  event: WebhookEvent,
});
export type NotificationDelivery = z.infer<typeof NotificationDelivery>;

/** How many deliveries the log answers, newest first. */
export const MAX_LISTED_DELIVERIES = 100;

/**
 * What the consumption leader watches for one account: the thresholds (empty: the account wants
 * no budget alerts), the rules and policies in scope (both empty: all), and the account's policies
 * and budget rules, which decide which caps apply to whom.
 */
export const AlertWatch = z.object({
  thresholds: z.array(z.number().int()),
  budget_rule_ids: z.array(Id),
  policy_ids: z.array(Id),
  policies: z.array(Policy),
  budget_rules: z.array(BudgetRule),
});
export type AlertWatch = z.infer<typeof AlertWatch>;

/** Control-plane endpoints of the notification setting and its delivery log. */
export const Notifications = {
  get: endpoint("agn.ctl.notifications.get", byCaller({}), NotificationSettings),
  create: endpoint(
    "agn.ctl.notifications.create",
    byCaller({ body: NotificationSettingsBody }),
    NotificationSettingsWithSecret,
  ),
  update: endpoint(
    "agn.ctl.notifications.update",
    byCaller({ body: NotificationSettingsBody }),
    NotificationSettings,
  ),
  delete: endpoint("agn.ctl.notifications.delete", byCaller({}), Empty),
  rotateSecret: endpoint("agn.ctl.notifications.rotate_secret", byCaller({}), NotificationSettingsWithSecret),
  deliveries: endpoint("agn.ctl.notifications.deliveries", byCaller({}), z.array(NotificationDelivery)),
  /** Service-to-service (consumption): what to watch for an account. */
  watch: endpoint("agn.ctl.notifications.watch", z.object({ account_id: Id }), AlertWatch),
} as const;

/** Alerts wait for delivery in JetStream, so a restart of the notifier loses none and retries resume. */
export const ALERTS_STREAM = "AGN_ALERTS";

/** Subjects of alerts: each producer may publish only its own kind. */
export const AlertSubjects = {
  budget: (accountId: string) => `agn.alerts.budget.${accountId}`,
  budgetAll: "agn.alerts.budget.*",
  provider: (accountId: string) => `agn.alerts.provider.${accountId}`,
  providerAll: "agn.alerts.provider.*",
  all: "agn.alerts.>",
  /** Proxies say a vendor refused a provider's credential (`CredentialRejectedNotice`). */
  credentialRejected: "agn.proxy.credential_rejected",
} as const;
