import { identityGrantAad, seal, unseal } from "@agentnet/sealing";
import * as oidc from "openid-client";
import type { HandlerContext } from "../handlers/context";
import type { IdentityGrantDoc } from "../store/sign-in-models";
import { endSignedInAccess } from "./grants";

export interface IdentityRecheckOptions {
  /** How long the provider's word on a user holds: past it, the provider is asked again. */
  everyMs: number;
}

/** The most grants one sweep asks about; the rest wait for the next sweep. */
const SWEEP_LIMIT = 100;

/**
 * Asks each account's identity provider again, with the refresh token of a user's latest sign-in,
 * whether it still vouches for the user, once `everyMs` has passed since it last did. A provider
 * that refuses the grant (`invalid_grant`: the person disabled or removed there, their sessions
 * revoked) ends the user's sessions and agent credentials at once, with an audit entry; a provider
 * that cannot be reached is asked again at the next interval, and ends nothing.
 *
 * Every replica sweeps; a grant is claimed by moving its `checked_at` (compare and set), so one
 * replica alone spends a rotating refresh token.
 */
export function startIdentityRecheck(ctx: HandlerContext, options: IdentityRecheckOptions): { stop(): void } {
  const { IdentityGrant, IdentityProvider } = ctx.models;
  let sweeping = false;

  const ask = async (grant: IdentityGrantDoc): Promise<void> => {
    const claimed = await IdentityGrant.updateOne(
      { _id: grant._id, checked_at: grant.checked_at },
      { $set: { checked_at: new Date() } },
    );
    if (claimed.modifiedCount !== 1) return;
    const owner = { account_id: grant.account_id, user_id: grant.user_id };
    const [session, credential] = await Promise.all([
      ctx.models.Session.exists({ ...owner, expires_at: { $gt: new Date() } }),
      ctx.models.AgentCredential.exists(owner),
    ]);
    if (!session && !credential) {
      // Nothing of the user's is left to end: the grant is not kept alive for nothing.
      await IdentityGrant.deleteOne({ _id: grant._id });
      return;
    }
    const provider = await IdentityProvider.findById(grant.account_id).lean();
    if (!provider?.enabled || provider.issuer !== grant.issuer || provider.client_id !== grant.client_id) {
      // The provider that granted it is gone or replaced: its token goes nowhere else.
      await IdentityGrant.deleteOne({ _id: grant._id });
      return;
    }
    const aad = identityGrantAad(grant.account_id, grant.user_id);
    let refreshed: oidc.TokenEndpointResponse;
    try {
      const config = await ctx.oidc.of(provider);
      refreshed = await oidc.refreshTokenGrant(
        config,
        unseal(ctx.sealingKey, grant.sealed_refresh_token, aad),
      );
    } catch (error) {
      if (error instanceof oidc.ResponseBodyError && error.error === "invalid_grant") {
        await endSignedInAccess(ctx, grant.account_id, grant.user_id);
        const user = await ctx.models.User.findById(grant.user_id).lean();
        await ctx.audit.record({
          account_id: grant.account_id,
          actor: { user_id: grant.user_id, ...(user ? { email: user.email } : {}) },
          action: "sessions.ended_by_provider",
          target: { type: "user", id: grant.user_id },
          outcome: "succeeded",
          error_code: "invalid_grant",
        });
        ctx.logger.info(
          { account_id: grant.account_id, user_id: grant.user_id, issuer: grant.issuer },
          "the identity provider no longer vouches for a user: their sessions and agent credentials ended",
        );
        return;
      }
      ctx.logger.warn(
        { err: error, account_id: grant.account_id, user_id: grant.user_id, issuer: grant.issuer },
        "the identity provider could not be asked about a user; asked again later",
      );
      return;
    }
    // A provider that rotates refresh tokens answers a new one: the old one is spent.
    if (refreshed.refresh_token) {
      await IdentityGrant.updateOne(
        { _id: grant._id },
        { $set: { sealed_refresh_token: seal(ctx.sealingKey, refreshed.refresh_token, aad) } },
      );
    }
  };

  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const due = await IdentityGrant.find({ checked_at: { $lte: new Date(Date.now() - options.everyMs) } })
        .sort({ checked_at: 1 })
        .limit(SWEEP_LIMIT)
        .lean();
      for (const grant of due) await ask(grant);
    } catch (error) {
      ctx.logger.warn({ err: error }, "asking the identity providers again failed; tried again later");
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), Math.min(options.everyMs, 60_000));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
