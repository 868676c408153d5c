import { auditActionOf, ControlPlane, unauthenticated } from "@agentnet/contracts";
import { hashToken, newId } from "@agentnet/service-kit";
import { loadTarget } from "../audit/changes";
import { ALL_GROUP_NAME, DEFAULT_ONBOARDING, defaultAccountSettings, domainOf } from "../domain/accounts";
import { BOOTSTRAP_TOKEN_DAYS, expiresAfterDays, generateToken } from "../domain/tokens";
import { type HandlerContext, handle } from "./context";

/** Token → caller, and the bootstrap of a new account with its owner and first token. */
export function registerIdentityHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  handle(ctx, ControlPlane.authResolve, async ({ token_hash }) => {
    // An API token, a proxy token an agent credential minted (docs/API.md "Agent credentials"), or
    // a browser session's (docs/API.md "Sign-in with your identity provider").
    const token =
      (await models.Token.findOne({ hash: token_hash }).lean()) ??
      (await models.AgentAccessToken.findOne({ hash: token_hash }).lean());
    const session = token ? undefined : await models.Session.findOne({ hash: token_hash }).lean();
    const stored = token ?? session;
    if (!stored || stored.expires_at.getTime() <= Date.now()) throw unauthenticated();
    const [user, account] = await Promise.all([
      models.User.findOne({ _id: stored.user_id, account_id: stored.account_id }).lean(),
      models.Account.findById(stored.account_id).lean(),
    ]);
    if (!user || !account || user.is_blocked) throw unauthenticated();
    const now = new Date();
    void models.Token.updateOne({ _id: stored._id }, { $set: { last_used: now } }).catch(() => undefined);
    return {
      account_id: account._id,
      user_id: user._id,
      role: user.role,
      group_ids: [account.all_group_id, ...user.auto_groups.filter((id) => id !== account.all_group_id)],
      email: user.email,
      name: user.name,
      ...(session ? { session_id: session._id } : { token_id: stored._id }),
      ...(token && "credential_id" in token ? { agent_credential_id: token.credential_id } : {}),
    };
  });

  handle(ctx, ControlPlane.accountsBootstrap, async ({ email, name }) => {
    const accountId = newId();
    const userId = newId();
    const allGroupId = newId();
    const token = generateToken();
    const normalisedEmail = email.toLowerCase();
    // The account's trail opens with its own making, by the owner it makes (no token yet).
    const pending = await ctx.audit.begin({
      account_id: accountId,
      actor: { user_id: userId, email: normalisedEmail, role: "owner" },
      action: auditActionOf(ControlPlane.accountsBootstrap),
      target: { type: "account", id: accountId },
      before: undefined,
    });
    await models.Account.create({
      _id: accountId,
      domain: domainOf(normalisedEmail),
      domain_category: "private",
      created_by: userId,
      settings: defaultAccountSettings(allGroupId),
      onboarding: DEFAULT_ONBOARDING,
      all_group_id: allGroupId,
    });
    await models.Group.create({ _id: allGroupId, account_id: accountId, name: ALL_GROUP_NAME });
    await models.User.create({
      _id: userId,
      account_id: accountId,
      email: normalisedEmail,
      name: name ?? normalisedEmail,
      role: "owner",
      auto_groups: [],
    });
    await models.Token.create({
      _id: newId(),
      account_id: accountId,
      user_id: userId,
      name: "bootstrap",
      hash: hashToken(token),
      expires_at: expiresAfterDays(BOOTSTRAP_TOKEN_DAYS),
      created_by: userId,
    });
    await ctx.audit.settle(
      pending,
      { outcome: "succeeded" },
      await loadTarget(ctx, accountId, { type: "account", id: accountId }),
    );
    ctx.logger.info({ account_id: accountId, user_id: userId }, "account bootstrapped");
    return { account_id: accountId, user_id: userId, token };
  });
}
