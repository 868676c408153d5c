import type {
  DeliveryStatus,
  NotificationDelivery,
  NotificationEventType,
  NotificationSettings,
  SealedSecret,
  WebhookEvent,
} from "@agentnet/contracts";
import { type Connection, type Model, Schema } from "mongoose";

const timestamps = { createdAt: "created_at", updatedAt: "updated_at" } as const;

export interface NotificationSettingsDoc {
  /** The account id: one setting per account, decided by the `_id` index. */
  _id: string;
  account_id: string;
  url: string;
  enabled: boolean;
  events: NotificationEventType[];
  thresholds: number[];
  budget_rule_ids: string[];
  policy_ids: string[];
  /** The signing secret, sealed like provider credentials (AGN_SEALING_KEY); never returned. */
  sealed_secret: SealedSecret;
  created_at: Date;
  updated_at: Date;
}

/**
 * One alert, recorded once: `_id` is the alert's key (a cap's counter, window and threshold; a
 * provider and hour), so a second insert of the same alert fails on the `_id` index, on MongoDB
 * and FerretDB alike. Only the notifier holding the alert's JetStream message writes it after that.
 */
export interface NotificationDeliveryDoc {
  _id: string;
  account_id: string;
  event_id: string;
  type: NotificationEventType;
  event: WebhookEvent;
  status: DeliveryStatus;
  attempts: number;
  last_error: string;
  response_status: number | null;
  /**
   * The stream sequence of the message that recorded the alert: a redelivery of that message
   * carries on with it, another message with the same key is a repeat and is dropped.
   */
  stream_seq: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  /** Deleted after this (`deliveryExpiry`). */
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

const mixed = { type: Schema.Types.Mixed };

const settingsSchema = new Schema<NotificationSettingsDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    url: { type: String, required: true },
    enabled: Boolean,
    events: [String],
    thresholds: [Number],
    budget_rule_ids: [String],
    policy_ids: [String],
    sealed_secret: { ...mixed, required: true },
  },
  { timestamps },
);

const deliverySchema = new Schema<NotificationDeliveryDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    event_id: { type: String, required: true },
    type: String,
    event: { ...mixed, required: true },
    status: String,
    attempts: Number,
    last_error: String,
    response_status: { type: Number, default: null },
    stream_seq: Number,
    last_attempt_at: { type: Date, default: null },
    next_attempt_at: { type: Date, default: null },
    expires_at: { type: Date, required: true },
  },
  { timestamps, minimize: false },
);
deliverySchema.index({ account_id: 1, created_at: -1 });
deliverySchema.index({ expires_at: 1 });

export interface NotificationModels {
  NotificationSettings: Model<NotificationSettingsDoc>;
  NotificationDelivery: Model<NotificationDeliveryDoc>;
}

export async function createNotificationModels(connection: Connection): Promise<NotificationModels> {
  const models: NotificationModels = {
    NotificationSettings: connection.model("NotificationSettings", settingsSchema, "notification_settings"),
    NotificationDelivery: connection.model("NotificationDelivery", deliverySchema, "notification_deliveries"),
  };
  await models.NotificationDelivery.createIndexes();
  return models;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export const toNotificationSettings = (doc: NotificationSettingsDoc): NotificationSettings => ({
  url: doc.url,
  enabled: doc.enabled,
  events: doc.events,
  thresholds: doc.thresholds,
  budget_rule_ids: doc.budget_rule_ids,
  policy_ids: doc.policy_ids,
  created_at: doc.created_at.toISOString(),
  updated_at: doc.updated_at.toISOString(),
});

export const toNotificationDelivery = (doc: NotificationDeliveryDoc): NotificationDelivery => ({
  id: doc.event_id,
  type: doc.type,
  status: doc.status,
  attempts: doc.attempts,
  last_error: doc.last_error,
  response_status: doc.response_status,
  created_at: doc.created_at.toISOString(),
  last_attempt_at: iso(doc.last_attempt_at),
  next_attempt_at: iso(doc.next_attempt_at),
  event: doc.event,
});
