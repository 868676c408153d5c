import { type BatchHandler, ensureAlertsStream, ensureDurableConsumer, jsonOrUndefined } from "@agentnet/bus";
import {
  ALERTS_STREAM,
  type Alert,
  AlertMessage,
  type DeliveryStatus,
  SIGNATURE_HEADER,
} from "@agentnet/contracts";
import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import { SealingError, unseal } from "@agentnet/sealing";
import { newId } from "@agentnet/service-kit";
import {
  deliveryExpiry,
  RETRY_DELAYS_MS,
  retryDelayAfter,
  signatureHeader,
  signingSecretAad,
  wantsAlert,
} from "../domain/webhooks";
import type { HandlerContext } from "../handlers/context";
import { isDuplicateKey } from "../store/models";
import type { NotificationDeliveryDoc, NotificationSettingsDoc } from "../store/notification-models";
import { type AttemptOutcome, postWebhook } from "./sender";

export interface NotifierOptions {
  /** The durable consumer on AGN_ALERTS, shared by every control-plane replica. */
  durable: string;
  /**
   * Private addresses webhooks may reach anyway (AGN_ALLOWED_PRIVATE_WEBHOOKS): ranges,
   * `address:port` and `name:port` entries (`packages/gateway-rules/src/private-allowance.ts`).
   */
  allowedPrivateWebhooks: readonly string[];
  /** One attempt's deadline, connection to last byte (WEBHOOK_TIMEOUT_MS). */
  attemptTimeoutMs: number;
  /** Waits between attempts; one more attempt than waits. */
  retryDelaysMs: readonly number[];
  /** Alerts delivered side by side, so one slow receiver holds up few others. */
  concurrency: number;
  /** How often expired delivery records are deleted; 0 never. */
  pruneIntervalMs: number;
}

export const defaultNotifierOptions: NotifierOptions = {
  durable: "notifier",
  allowedPrivateWebhooks: [],
  attemptTimeoutMs: 10_000,
  retryDelaysMs: RETRY_DELAYS_MS,
  concurrency: 16,
  pruneIntervalMs: 3600 * 1000,
};

type JsMsg = Parameters<BatchHandler>[0][number];

const FINAL: ReadonlySet<DeliveryStatus> = new Set(["delivered", "failed", "refused"]);

/**
 * Delivers alerts from the `AGN_ALERTS` stream by signed webhook. Each alert is recorded once
 * (insert on its key: a repeat of an alert already recorded is dropped) and then sent; a failed
 * attempt is recorded and its message handed back to JetStream with the next wait (`nak` with a
 * delay), so retries survive a restart and go to whichever replica pulls next, never to two at
 * once. Returns a stop function.
 */
export async function startNotifier(ctx: HandlerContext, overrides: Partial<NotifierOptions> = {}) {
  const options = { ...defaultNotifierOptions, ...overrides };
  const { allowance, problems } = parsePrivateUpstreamAllowance(options.allowedPrivateWebhooks);
  if (problems.length > 0) throw new Error(`AGN_ALLOWED_PRIVATE_WEBHOOKS: ${problems.join("; ")}`);
  const { models, logger } = ctx;
  await ensureAlertsStream(ctx.nc);
  const consumer = await ensureDurableConsumer(ctx.nc, {
    durable: options.durable,
    stream: ALERTS_STREAM,
    // Longer than an attempt and its two writes: a message is never redelivered mid-attempt.
    ackWaitMs: options.attemptTimeoutMs + 30_000,
    maxAckPending: 1_000,
  });

  /** The alert's delivery record, made now if the account wants it; undefined when there is nothing to send. */
  const recordOnce = async (
    message: JsMsg,
    key: string,
    alert: Alert,
    wanted: boolean,
  ): Promise<NotificationDeliveryDoc | undefined> => {
    if (wanted) {
      const eventId = `evt_${newId()}`;
      try {
        const created = await models.NotificationDelivery.create({
          _id: key,
          account_id: alert.account_id,
          event_id: eventId,
          type: alert.type,
          event: { id: eventId, ...alert },
          status: "pending",
          attempts: 0,
          last_error: "",
          stream_seq: message.seq,
          expires_at: deliveryExpiry(alert, Date.now()),
        });
        return created.toObject();
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
    const recorded = await models.NotificationDelivery.findOne({
      _id: key,
      account_id: alert.account_id,
    }).lean();
    // Another message with this key: the alert was recorded (and sent) before.
    return recorded?.stream_seq === message.seq ? recorded : undefined;
  };

  const record = (doc: NotificationDeliveryDoc, fields: Partial<NotificationDeliveryDoc>) =>
    models.NotificationDelivery.updateOne({ _id: doc._id, account_id: doc.account_id }, { $set: fields });

  const attempt = async (
    doc: NotificationDeliveryDoc,
    settings: NotificationSettingsDoc,
  ): Promise<AttemptOutcome> => {
    let secret: string;
    try {
      secret = unseal(ctx.sealingKey, settings.sealed_secret, signingSecretAad(settings.account_id));
    } catch (error) {
      if (!(error instanceof SealingError)) throw error;
      return { kind: "refused", reason: "the signing secret cannot be opened with AGN_SEALING_KEY" };
    }
    const body = JSON.stringify(doc.event);
    return postWebhook({
      url: settings.url,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": "agentnet-webhooks/1",
        "x-agentnet-event": doc.type,
        "x-agentnet-delivery": doc.event_id,
        [SIGNATURE_HEADER]: signatureHeader(secret, body, Math.floor(Date.now() / 1000)),
      },
      timeoutMs: options.attemptTimeoutMs,
      allowance,
    });
  };

  const deliver = async (message: JsMsg) => {
    const parsed = AlertMessage.safeParse(jsonOrUndefined(message.string()));
    if (!parsed.success) {
      logger.warn({ issues: parsed.error.issues.slice(0, 3) }, "dropping a message that is not an alert");
      message.term();
      return;
    }
    const { key, alert } = parsed.data;
    const settings = await models.NotificationSettings.findOne({
      _id: alert.account_id,
      account_id: alert.account_id,
    }).lean();
    const wanted = settings !== null && wantsAlert(settings, alert);
    const doc = await recordOnce(message, key, alert, wanted);
    if (!doc || FINAL.has(doc.status)) {
      message.ack();
      return;
    }
    const attempts = doc.attempts + 1;
    const outcome: AttemptOutcome =
      settings && wanted
        ? await attempt(doc, settings)
        : { kind: "refused", reason: "notifications of this event were turned off before it was sent" };
    const now = new Date();
    if (outcome.kind === "refused") {
      await record(doc, { status: "refused", last_error: outcome.reason, next_attempt_at: null });
      logger.warn(
        { account_id: doc.account_id, event_id: doc.event_id, reason: outcome.reason },
        "webhook refused",
      );
      message.ack();
      return;
    }
    const answered = outcome.kind === "answered";
    const delivered = answered && outcome.status >= 200 && outcome.status < 300;
    const lastError = delivered ? "" : answered ? `the receiver answered ${outcome.status}` : outcome.reason;
    const wait = delivered ? undefined : retryDelayAfter(attempts, options.retryDelaysMs);
    const status: DeliveryStatus = delivered ? "delivered" : wait === undefined ? "failed" : "retrying";
    await record(doc, {
      status,
      attempts,
      last_error: lastError,
      response_status: answered ? outcome.status : null,
      last_attempt_at: now,
      next_attempt_at: wait === undefined ? null : new Date(now.getTime() + wait),
    });
    if (wait === undefined) {
      if (status === "failed")
        logger.warn(
          { account_id: doc.account_id, event_id: doc.event_id, attempts, lastError },
          "webhook failed",
        );
      message.ack();
    } else {
      message.nak(wait);
    }
  };

  const abort = new AbortController();
  const running = () => !abort.signal.aborted && !ctx.nc.isClosed();
  const loop = (async () => {
    while (running()) {
      const messages: JsMsg[] = [];
      try {
        const batch = await consumer.fetch({ max_messages: options.concurrency, expires: 1_000 });
        for await (const message of batch) messages.push(message);
      } catch (error) {
        if (running()) logger.warn({ err: error }, "fetching alerts failed");
      }
      if (messages.length === 0) {
        if (running()) await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      await Promise.all(
        messages.map((message) =>
          deliver(message).catch((error: unknown) => {
            logger.error({ err: error }, "delivering an alert failed; it comes back shortly");
            message.nak(5_000);
          }),
        ),
      );
    }
  })();

  const prune = () =>
    models.NotificationDelivery.deleteMany({ expires_at: { $lt: new Date() } }).catch((error: unknown) =>
      logger.error({ err: error }, "pruning webhook deliveries failed"),
    );
  const pruner = options.pruneIntervalMs > 0 ? setInterval(prune, options.pruneIntervalMs) : undefined;
  pruner?.unref();

  return {
    async stop() {
      abort.abort();
      clearInterval(pruner);
      await loop;
    },
  };
}

export type Notifier = Awaited<ReturnType<typeof startNotifier>>;
