import { identityGrantAad, SealingError, seal, unseal } from "@agentnet/sealing";
import * as oidc from "openid-client";
import type { HandlerContext } from "../handlers/context";
import type { IdentityGrantDoc } from "../store/sign-in-models";
import { endSignedInAccess } from "./grants";

export interface IdentityRecheckOptions {
  /** How long the provider's word on a user holds: past it, the provider is asked again. */
  everyMs: number;
}

/** The most grants one sweep takes up, and how many it asks about at once. */
const SWEEP_LIMIT = 200;
const CONCURRENT_ASKS = 8;

/** The action of the entry that says a provider no longer vouches for a user. */
export const ENDED_BY_PROVIDER = "sessions.ended_by_provider";

/** Why a user's signed-in access ended: the entry's `error_code`, and the log's words. */
interface Ending {
  code: "invalid_grant" | "identity_provider.off" | "identity_grant.unreadable";
  reason: string;
}

/**
 * Asks each account's identity provider again, with the refresh token of a user's latest sign-in,
 * whether it still vouches for the user, once `everyMs` has passed since it last did. It fails
 * closed: access that cannot be vouched for ends, and the person signs in again.
 *
 * - The provider refuses the grant (`invalid_grant`: the person disabled or removed there, their
 *   grant revoked or expired; or a rotated token whose answer was lost), the account's provider was
 *   turned off or replaced, or no key opens the stored token: the user's sessions and agent
 *   credentials end at once, with an audit entry.
 * - The provider cannot be reached, or answers anything else: nothing ends; it is asked again at
 *   the next interval.
 * - A user with nothing left to end (no session, no live agent credential), blocked or deleted
 *   loses the grant instead of keeping it alive at the provider.
 *
 * Every replica sweeps. A replica claims a grant by moving its `checked_at` (compare and set) and
 * every later write names that value, so a sign-in that replaced the grant meanwhile wins and one
 * replica alone spends a rotating refresh token. Ending marks the grant `ending` first: access that
 * could not be ended (a store or bus failure) is ended by the next sweep.
 */
export function startIdentityRecheck(
  ctx: HandlerContext,
  options: IdentityRecheckOptions,
): { stop(): Promise<void> } {
  const { IdentityGrant, IdentityProvider, Session, AgentCredential, User } = ctx.models;
  let sweeping: Promise<void> | undefined;
  let stopping = false;

  const ask = async (grant: IdentityGrantDoc): Promise<void> => {
    const claimedAt = new Date();
    const claimed = await IdentityGrant.updateOne(
      { _id: grant._id, checked_at: grant.checked_at },
      { $set: { checked_at: claimedAt } },
    );
    if (claimed.modifiedCount !== 1) return;
    const mine = { _id: grant._id, checked_at: claimedAt };
    const owner = { account_id: grant.account_id, user_id: grant.user_id };
    const user = await User.findOne({ _id: grant.user_id, account_id: grant.account_id }).lean();
    const end = (ending: Ending) => endAccess(grant, mine, user?.email, ending);
    if (grant.ending) {
      await end({ code: "invalid_grant", reason: "ending what an earlier sweep could not" });
      return;
    }
    const now = new Date();
    const [session, credential] = await Promise.all([
      Session.exists({ ...owner, expires_at: { $gt: now } }),
      AgentCredential.exists({ ...owner, expires_at: { $gt: now } }),
    ]);
    if (!user || user.is_blocked || (!session && !credential)) {
      await IdentityGrant.deleteOne(mine);
      return;
    }
    const provider = await IdentityProvider.findById(grant.account_id).lean();
    if (!provider?.enabled || provider.issuer !== grant.issuer || provider.client_id !== grant.client_id) {
      await end({
        code: "identity_provider.off",
        reason: "the identity provider that signed them in was turned off or replaced",
      });
      return;
    }
    const aad = identityGrantAad(grant.account_id, grant.user_id);
    let refreshToken: string;
    try {
      refreshToken = unseal(ctx.sealingKey, grant.sealed_refresh_token, aad);
    } catch (error) {
      if (!(error instanceof SealingError)) throw error;
      await end({ code: "identity_grant.unreadable", reason: "no sealing key opens the stored grant" });
      return;
    }
    let refreshed: oidc.TokenEndpointResponse;
    try {
      refreshed = await oidc.refreshTokenGrant(await ctx.oidc.of(provider), refreshToken);
    } catch (error) {
      if (error instanceof oidc.ResponseBodyError && error.error === "invalid_grant") {
        await end({ code: "invalid_grant", reason: "the identity provider refused the sign-in's grant" });
        return;
      }
      ctx.logger.warn(
        { err: error, ...owner, issuer: grant.issuer },
        "the identity provider could not be asked about a user; asked again later",
      );
      return;
    }
    // A provider that rotates refresh tokens answers a new one: the old one is spent.
    if (refreshed.refresh_token) {
      await IdentityGrant.updateOne(mine, {
        $set: { sealed_refresh_token: seal(ctx.sealingKey, refreshed.refresh_token, aad) },
      });
    }
  };

  /** Ends the user's signed-in access, its entry's intent stored first and the grant marked. */
  const endAccess = async (
    grant: IdentityGrantDoc,
    mine: { _id: string; checked_at: Date },
    email: string | undefined,
    ending: Ending,
  ) => {
    const pending = await ctx.audit.begin({
      account_id: grant.account_id,
      actor: { user_id: grant.user_id, ...(email ? { email } : {}) },
      action: ENDED_BY_PROVIDER,
      target: { type: "user", id: grant.user_id },
      before: undefined,
    });
    const marked = await IdentityGrant.updateOne(mine, { $set: { ending: true } });
    if (marked.matchedCount !== 1) {
      // A sign-in replaced the grant meanwhile: the provider vouched for the user again.
      await ctx.audit.settle(pending, { outcome: "failed", error_code: "sign_in.replaced" }, undefined);
      return;
    }
    try {
      await endSignedInAccess(ctx, grant.account_id, grant.user_id);
    } catch (error) {
      await ctx.audit.settle(pending, { outcome: "failed", error_code: ending.code }, undefined);
      throw error;
    }
    await ctx.audit.settle(pending, { outcome: "succeeded", error_code: ending.code }, undefined);
    ctx.logger.info(
      { account_id: grant.account_id, user_id: grant.user_id, issuer: grant.issuer, reason: ending.reason },
      "the identity provider no longer vouches for a user: their sessions and agent credentials ended",
    );
  };

  const sweep = async () => {
    try {
      const due = await IdentityGrant.find({ checked_at: { $lte: new Date(Date.now() - options.everyMs) } })
        .sort({ checked_at: 1 })
        .limit(SWEEP_LIMIT)
        .lean();
      // A few at a time: one slow provider holds its own users, not every account's.
      const worker = async () => {
        for (let grant = due.shift(); grant && !stopping; grant = due.shift()) {
          const asked = grant;
          await ask(asked).catch((error: unknown) =>
            ctx.logger.warn({ err: error, user_id: asked.user_id }, "asking the identity provider failed"),
          );
        }
      };
      await Promise.all(Array.from({ length: CONCURRENT_ASKS }, worker));
    } catch (error) {
      ctx.logger.warn({ err: error }, "asking the identity providers again failed; tried again later");
    }
  };
  const timer = setInterval(
    () => {
      sweeping ??= sweep().finally(() => {
        sweeping = undefined;
      });
    },
    Math.min(options.everyMs, 60_000),
  );
  timer.unref();
  return {
    // The asks under way finish (a rotated token kept, an ending done); no new one starts.
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await sweeping;
    },
  };
}
