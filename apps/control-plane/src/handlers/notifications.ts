import {
  type AlertWatch,
  type Caller,
  conflict,
  type ErrorDetail,
  MAX_LISTED_DELIVERIES,
  type NotificationSettingsBody,
  Notifications,
  notFound,
  unprocessable,
} from "@agentnet/contracts";
import { type SealingKeys, seal } from "@agentnet/sealing";
import { handleChange } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import { generateSigningSecret, signingSecretAad } from "../domain/webhooks";
import { toBudgetRule, toPolicy } from "../store/agent-views";
import { isDuplicateKey } from "../store/models";
import { toNotificationDelivery, toNotificationSettings } from "../store/notification-models";
import { announceConfigChange, type HandlerContext, handle, missingIds } from "./context";

/** A new signing secret and its sealed form, bound to the account's setting. */
export const newSigningSecret = (keys: SealingKeys, accountId: string) => {
  const secret = generateSigningSecret();
  return { secret, sealed: seal(keys, secret, signingSecretAad(accountId)) };
};

const NOTHING_WATCHED: AlertWatch = {
  thresholds: [],
  budget_rule_ids: [],
  policy_ids: [],
  policies: [],
  budget_rules: [],
};

/**
 * The account's webhook for alerts (one per account; `_id` is the account id) and its delivery
 * log, plus what consumption watches for budget crossings. The signing secret is made here,
 * answered once (create, rotation) and stored sealed.
 */
export function registerNotificationHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  /** Rules and policies in scope must be the account's own (one deleted later is never matched). */
  const requireScopeExists = async (caller: Caller, body: NotificationSettingsBody) => {
    const [rules, policies] = await Promise.all([
      missingIds(models.BudgetRule, caller.account_id, body.budget_rule_ids),
      missingIds(models.Policy, caller.account_id, body.policy_ids),
    ]);
    const details: ErrorDetail[] = [
      ...rules.map((id) => ({ path: "budget_rule_ids", message: `unknown budget rule ${id}` })),
      ...policies.map((id) => ({ path: "policy_ids", message: `unknown policy ${id}` })),
    ];
    if (details.length > 0)
      throw unprocessable(
        "notifications.unknown_reference",
        details.map((d) => d.message).join("; "),
        details,
      );
  };

  const fields = (body: NotificationSettingsBody) => ({
    url: body.url,
    enabled: body.enabled,
    events: body.events,
    thresholds: body.thresholds,
    budget_rule_ids: body.budget_rule_ids,
    policy_ids: body.policy_ids,
  });

  const own = (caller: Caller) => ({ _id: caller.account_id, account_id: caller.account_id });

  handle(ctx, Notifications.get, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const stored = await models.NotificationSettings.findOne(own(caller)).lean();
    if (!stored) throw notFound("notification settings");
    return toNotificationSettings(stored);
  });

  handleChange(ctx, Notifications.create, {}, async ({ caller, body }) => {
    requireWriter(caller);
    await requireScopeExists(caller, body);
    const { secret, sealed } = newSigningSecret(ctx.sealingKey, caller.account_id);
    try {
      const created = await models.NotificationSettings.create({
        ...own(caller),
        ...fields(body),
        sealed_secret: sealed,
      });
      announceConfigChange(ctx, caller.account_id);
      return { ...toNotificationSettings(created.toObject()), signing_secret: secret };
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      throw conflict(
        "notifications.exists",
        "the account already has notification settings; use PUT to change them",
      );
    }
  });

  handleChange(ctx, Notifications.update, {}, async ({ caller, body }) => {
    requireWriter(caller);
    await requireScopeExists(caller, body);
    const updated = await models.NotificationSettings.findOneAndUpdate(
      own(caller),
      { $set: fields(body) },
      { new: true },
    ).lean();
    if (!updated) throw notFound("notification settings");
    announceConfigChange(ctx, caller.account_id);
    return toNotificationSettings(updated);
  });

  handleChange(ctx, Notifications.delete, {}, async ({ caller }) => {
    requireWriter(caller);
    const deleted = await models.NotificationSettings.deleteOne(own(caller));
    if (deleted.deletedCount === 0) throw notFound("notification settings");
    announceConfigChange(ctx, caller.account_id);
    return {};
  });

  handleChange(ctx, Notifications.rotateSecret, {}, async ({ caller }) => {
    requireWriter(caller);
    const { secret, sealed } = newSigningSecret(ctx.sealingKey, caller.account_id);
    const updated = await models.NotificationSettings.findOneAndUpdate(
      own(caller),
      { $set: { sealed_secret: sealed } },
      { new: true },
    ).lean();
    if (!updated) throw notFound("notification settings");
    ctx.logger.info({ account_id: caller.account_id }, "webhook signing secret rotated");
    return { ...toNotificationSettings(updated), signing_secret: secret };
  });

  handle(ctx, Notifications.deliveries, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const docs = await models.NotificationDelivery.find({ account_id: caller.account_id })
      .sort({ created_at: -1, _id: 1 })
      .limit(MAX_LISTED_DELIVERIES)
      .lean();
    return docs.map(toNotificationDelivery);
  });

  handle(ctx, Notifications.watch, async ({ account_id }) => {
    const stored = await models.NotificationSettings.findOne({ _id: account_id, account_id }).lean();
    if (!stored?.enabled || !stored.events.includes("budget.threshold_crossed")) return NOTHING_WATCHED;
    const [policies, rules] = await Promise.all([
      models.Policy.find({ account_id }).sort({ created_at: 1 }).lean(),
      models.BudgetRule.find({ account_id }).sort({ created_at: 1 }).lean(),
    ]);
    return {
      thresholds: stored.thresholds,
      budget_rule_ids: stored.budget_rule_ids,
      policy_ids: stored.policy_ids,
      policies: policies.map(toPolicy),
      budget_rules: rules.map(toBudgetRule),
    };
  });
}
