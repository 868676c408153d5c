import {
  AppError,
  auditActionOf,
  badRequest,
  ControlPlane,
  conflict,
  type Endpoint,
  type IdentityProvider,
  notFound,
  unprocessable,
} from "@agentnet/contracts";
import { identityProviderSecretAad, seal } from "@agentnet/sealing";
import { hashToken, newId } from "@agentnet/service-kit";
import * as oidc from "openid-client";
import { auditedChange, handleChange, loadTarget, outcomeOf } from "../audit/changes";
import { requireAccountWideGrant, requireOwner } from "../domain/access";
import { generateToken } from "../domain/tokens";
import { endSignedInAccess, keepGrant } from "../identity/grants";
import { signInScopes } from "../identity/oidc-clients";
import type { IdentityProviderDoc } from "../store/sign-in-models";
import { announceConfigChange, type HandlerContext, handle, missingIds, revokeCallers } from "./context";

/** How long a sign-in may take at the provider, and how long a browser session lasts. */
const SIGN_IN_SECONDS = 600;
const SESSION_HOURS = 12;

const shown = (doc: IdentityProviderDoc): IdentityProvider => ({
  issuer: doc.issuer,
  client_id: doc.client_id,
  allowed_email_domains: doc.allowed_email_domains,
  groups_claim: doc.groups_claim,
  group_mapping: doc.group_mapping.map(({ claim_value, group_id }) => ({ claim_value, group_id })),
  default_role: doc.default_role,
  enabled: doc.enabled,
  client_secret_set: true,
  updated_at: doc.updated_at.toISOString(),
});

/** The claim's values as strings: a list, or one value. */
const claimValues = (claim: unknown): string[] =>
  Array.isArray(claim)
    ? claim.filter((value): value is string => typeof value === "string")
    : typeof claim === "string"
      ? [claim]
      : [];

/**
 * Sign-in with the account's OpenID Connect provider (docs/API.md "Sign-in with your identity
 * provider"): its settings; the authorization code flow with PKCE, state and nonce, run here (the
 * client secret never leaves the control-plane) for the api-gateway, which holds the browser; the
 * browser sessions it makes, which `agn.ctl.auth.resolve` answers like tokens.
 */
export function registerSignInHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  handle(ctx, ControlPlane.identityProviderGet, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const stored = await models.IdentityProvider.findById(caller.account_id).lean();
    if (!stored) throw notFound("identity provider");
    return shown(stored);
  });

  // Owner only: whoever names the provider decides who may sign in as anyone, owners included.
  handleChange(ctx, ControlPlane.identityProviderPut, {}, async ({ caller, body }) => {
    requireOwner(caller);
    const stored = await models.IdentityProvider.findById(caller.account_id).lean();
    if (
      !body.client_secret &&
      (!stored || stored.issuer !== body.issuer || stored.client_id !== body.client_id)
    ) {
      // The secret is the old provider's: it never goes to another one.
      throw badRequest(
        "client_secret is required when the identity provider is set up, or its issuer or client_id change",
      );
    }
    const unknown = await missingIds(
      models.Group,
      caller.account_id,
      body.group_mapping.map((entry) => entry.group_id),
    );
    if (unknown.length > 0) {
      throw unprocessable(
        "identity_provider.unknown_group",
        `group_mapping names groups the account has not: ${unknown.join(", ")}`,
      );
    }
    // Sign-in by email finds the account by its domain: two accounts claiming one would leave its
    // people unable to sign in by email (the dashboard's way), so a new claim of a domain another
    // account holds is refused (ones this account held already stay, so a change never locks it).
    const added = body.allowed_email_domains.filter(
      (domain) => !stored?.allowed_email_domains.includes(domain),
    );
    const claimed =
      body.enabled && added.length > 0
        ? await models.IdentityProvider.findOne({
            _id: { $ne: caller.account_id },
            enabled: true,
            allowed_email_domains: { $in: added },
          }).lean()
        : null;
    if (claimed) {
      const taken = added.filter((domain) => claimed.allowed_email_domains.includes(domain));
      throw conflict(
        "identity_provider.domain_taken",
        `another account signs in people of ${taken.join(", ")}: an email domain belongs to one account`,
      );
    }
    const { client_secret: secret, ...settings } = body;
    const updated = await models.IdentityProvider.findOneAndUpdate(
      { _id: caller.account_id },
      {
        $set: {
          ...settings,
          account_id: caller.account_id,
          ...(secret
            ? {
                sealed_client_secret: seal(
                  ctx.sealingKey,
                  secret,
                  identityProviderSecretAad(caller.account_id),
                ),
              }
            : {}),
        },
      },
      { upsert: true, new: true },
    ).lean();
    if (!updated) throw notFound("identity provider");
    return shown(updated);
  });

  handleChange(ctx, ControlPlane.identityProviderDelete, {}, async ({ caller }) => {
    requireOwner(caller);
    const removed = await models.IdentityProvider.deleteOne({ _id: caller.account_id });
    if (removed.deletedCount === 0) throw notFound("identity provider");
    return {};
  });

  handle(ctx, ControlPlane.signInStart, async ({ account_id, email, redirect_uri }) => {
    const domain = email?.toLowerCase().split("@")[1];
    const candidates = account_id
      ? await models.IdentityProvider.find({ _id: account_id, enabled: true }).lean()
      : domain
        ? await models.IdentityProvider.find({ allowed_email_domains: domain, enabled: true }).lean()
        : [];
    if (candidates.length > 1) {
      throw conflict("sign_in.ambiguous", `several accounts sign in people of ${domain}: name the account`);
    }
    const [provider] = candidates;
    if (!provider) throw notFound(`identity provider for ${account_id ?? domain ?? "(nothing named)"}`);
    const config = await ctx.oidc.of(provider);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    await models.SignInAttempt.create({
      _id: hashToken(state),
      account_id: provider.account_id,
      code_verifier: verifier,
      nonce,
      redirect_uri,
      expires_at: new Date(Date.now() + SIGN_IN_SECONDS * 1000),
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri,
      scope: signInScopes(config),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
      ...(email ? { login_hint: email } : {}),
    });
    return { authorization_url: url.href, state };
  });

  handle(ctx, ControlPlane.signInFinish, async ({ state, callback_url, address, user_agent }) => {
    // One use: a replayed callback finds nothing.
    const attempt = await models.SignInAttempt.findOneAndDelete({ _id: hashToken(state) }).lean();
    if (!attempt || attempt.expires_at <= new Date()) {
      throw badRequest("this sign-in is unknown, used or expired: start again");
    }
    const accountId = attempt.account_id;
    const origin = { ...(address ? { address } : {}), ...(user_agent ? { user_agent } : {}) };
    const refuse = async (
      status: number,
      code: string,
      message: string,
      who: { user_id?: string; email?: string },
    ) => {
      // A known person the sign-in refuses loses what earlier sign-ins gave them, now.
      const known = who.email
        ? await models.User.findOne({ account_id: accountId, email: who.email }).lean()
        : null;
      if (known) await endSignedInAccess(ctx, accountId, known._id);
      await ctx.audit.record({
        account_id: accountId,
        actor: { ...who, ...origin },
        action: auditActionOf(ControlPlane.signInFinish),
        target: { type: "session" },
        outcome: status === 401 || status === 403 ? "refused" : "failed",
        status,
        error_code: code,
      });
      return new AppError(status, code, message);
    };
    const provider = await models.IdentityProvider.findById(accountId).lean();
    if (!provider?.enabled)
      throw await refuse(403, "sign_in.disabled", "sign-in with the identity provider is off", {});
    const config = await ctx.oidc.of(provider);
    let claims: oidc.IDToken;
    let refreshToken: string | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, new URL(callback_url), {
        pkceCodeVerifier: attempt.code_verifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error("no ID token");
      claims = idClaims;
      refreshToken = tokens.refresh_token;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw await refuse(401, "sign_in.refused", `the identity provider refused the sign-in: ${message}`, {});
    }
    const email = typeof claims.email === "string" ? claims.email.toLowerCase() : undefined;
    // Only an email the provider says it verified names a user here: one a person typed in a
    // profile could name anyone.
    if (!email || claims.email_verified !== true) {
      throw await refuse(403, "sign_in.no_email", "the identity provider vouched for no verified email", {});
    }
    const domain = email.split("@")[1] ?? "";
    if (provider.allowed_email_domains.length > 0 && !provider.allowed_email_domains.includes(domain)) {
      throw await refuse(403, "sign_in.domain_not_allowed", `people of ${domain} may not sign in here`, {
        email,
      });
    }
    const claimed = new Set(claimValues(claims[provider.groups_claim]));
    const mapped = new Set(provider.group_mapping.map((entry) => entry.group_id));
    const granted = provider.group_mapping
      .filter((entry) => claimed.has(entry.claim_value))
      .map((entry) => entry.group_id);

    let user = await models.User.findOne({ account_id: accountId, email }).lean();
    if (user?.is_blocked) {
      throw await refuse(403, "sign_in.blocked", "this user is blocked", { user_id: user._id, email });
    }
    // A user is the provider's person who first signed in as them: the same email later held by
    // another person there (or at another issuer) is not them.
    const identity = { issuer: claims.iss, subject: claims.sub };
    if (
      user?.oidc_identity &&
      (user.oidc_identity.issuer !== identity.issuer || user.oidc_identity.subject !== identity.subject)
    ) {
      throw await refuse(
        403,
        "sign_in.other_identity",
        "this email belongs to another person of the identity provider",
        {
          user_id: user._id,
          email,
        },
      );
    }
    const sessionId = newId();
    const actor = {
      ...(user ? { user_id: user._id, role: user.role } : {}),
      email,
      session_id: sessionId,
      ...origin,
    };
    const pending = await ctx.audit.begin({
      account_id: accountId,
      actor,
      action: auditActionOf(ControlPlane.signInFinish),
      target: { type: "session", id: sessionId },
      before: undefined,
    });
    // Whatever stops the sign-in from here on settles its entry as failed (nothing left interrupted).
    const admit = async () => {
      const now = new Date();
      // The user the sign-in creates, or the groups it changes, is an entry of its own: the person
      // signing in made that change, through the identity provider's say.
      const userChange = (action: Endpoint, userId: string, change: () => Promise<void>) =>
        auditedChange(
          ctx,
          {
            account_id: accountId,
            actor,
            action: auditActionOf(action),
            target: { type: "user", id: userId },
            creates: action === ControlPlane.usersCreate,
          },
          change,
        );
      if (!user) {
        const userId = newId();
        await userChange(ControlPlane.usersCreate, userId, async () => {
          await models.User.create({
            _id: userId,
            account_id: accountId,
            email,
            name: typeof claims.name === "string" ? claims.name : email,
            role: provider.default_role,
            auto_groups: [...new Set(granted)],
            last_login: now,
            oidc_identity: identity,
          });
        });
        user = await models.User.findById(userId).orFail().lean();
      } else {
        const known = user;
        // Groups the mapping governs follow the claim; others (given by hand) stay.
        const groups = [...new Set([...known.auto_groups.filter((id) => !mapped.has(id)), ...granted])];
        const changed =
          groups.length !== known.auto_groups.length || groups.some((id) => !known.auto_groups.includes(id));
        const update = () =>
          models.User.updateOne(
            { _id: known._id },
            { $set: { auto_groups: groups, last_login: now, oidc_identity: identity } },
          ).then(() => undefined);
        if (changed) {
          await userChange(ControlPlane.usersUpdate, known._id, update);
          await revokeCallers(ctx, accountId, { userIds: [known._id] });
          announceConfigChange(ctx, accountId);
        } else {
          await update();
        }
      }
      // Before the session, so a grant that cannot be kept leaves no session nobody holds; a sweep
      // does not take it up for an interval (it is checked now), and finds the session by then.
      await keepGrant(ctx, provider, user._id, refreshToken, now);
      const token = generateToken();
      const expiresAt = new Date(now.getTime() + SESSION_HOURS * 3_600_000);
      await models.Session.create({
        _id: sessionId,
        account_id: accountId,
        user_id: user._id,
        hash: hashToken(token),
        created_at: now,
        expires_at: expiresAt,
        ...origin,
      });
      return { token, expiresAt, userId: user._id };
    };
    const session = { type: "session" as const, id: sessionId };
    let admitted: Awaited<ReturnType<typeof admit>>;
    try {
      admitted = await admit();
    } catch (error) {
      await ctx.audit.settle(
        pending,
        outcomeOf(error),
        await loadTarget(ctx, accountId, session).catch(() => undefined),
      );
      throw error;
    }
    await ctx.audit.settle(
      pending,
      { outcome: "succeeded" },
      await loadTarget(ctx, accountId, session).catch(() => undefined),
    );
    return {
      session_token: admitted.token,
      expires_at: admitted.expiresAt.toISOString(),
      account_id: accountId,
      user_id: admitted.userId,
    };
  });

  handleChange(ctx, ControlPlane.signOut, { id: (r) => r.caller.session_id ?? "" }, async ({ caller }) => {
    if (!caller.session_id)
      throw badRequest("sign-out ends a browser session; this request came with a token");
    await models.Session.deleteOne({ _id: caller.session_id, account_id: caller.account_id });
    await revokeCallers(ctx, caller.account_id, { userIds: [caller.user_id] });
    return {};
  });
}
