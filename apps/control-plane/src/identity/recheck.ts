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

/**
 * Asks each account's identity provider again, with the refresh token of a user's latest sign-in,
 * whether it still vouches for the user, once `everyMs` has passed since it last did:
 *
 * - the provider refuses the grant (`invalid_grant`: the person disabled or removed there, their
 *   grant revoked or expired), or the account's provider was turned off or replaced: the user's
 *   sessions and agent credentials end at once, with an audit entry;
 * - the provider cannot be reached, or answers anything else: nothing ends, it is asked again at
 *   the next interval;
 * - a user with nothing left to end (no session, no live agent credential), blocked or deleted
 *   loses the grant instead of keeping it alive at the provider.
 *
 * Every replica sweeps. A replica claims a grant by moving its `checked_at` (compare and set) and
 * every later write names that value, so a sign-in that replaced the grant meanwhile wins and one
 * replica alone spends a rotating refresh token. A refresh whose answer never came (a timeout, a
 * stop) may have rotated the token at the provider: the grant says so (`asking`), and a refusal of
 * it then drops the grant without ending anything, since it may be the gateway's own doing.
 */
export function startIdentityRecheck(
  ctx: HandlerContext,
  options: IdentityRecheckOptions,
): { stop(): Promise<void> } {
  const { IdentityGrant, IdentityProvider, Session, AgentCredential, User } = ctx.models;
  let sweeping: Promise<void> | undefined;

  const ask = async (grant: IdentityGrantDoc): Promise<void> => {
    const claimedAt = new Date();
    const claimed = await IdentityGrant.updateOne(
      { _id: grant._id, checked_at: grant.checked_at },
      { $set: { checked_at: claimedAt, asking: true } },
    );
    if (claimed.modifiedCount !== 1) return;
    const mine = { _id: grant._id, checked_at: claimedAt };
    const drop = async () => (await IdentityGrant.deleteOne(mine)).deletedCount === 1;
    const owner = { account_id: grant.account_id, user_id: grant.user_id };
    const now = new Date();
    const [user, session, credential] = await Promise.all([
      User.findOne({ _id: grant.user_id, account_id: grant.account_id }).lean(),
      Session.exists({ ...owner, expires_at: { $gt: now } }),
      AgentCredential.exists({ ...owner, expires_at: { $gt: now } }),
    ]);
    if (!user || user.is_blocked || (!session && !credential)) {
      await drop();
      return;
    }
    const end = (reason: string) => endAccess(grant, mine, { email: user.email, reason });
    const provider = await IdentityProvider.findById(grant.account_id).lean();
    if (!provider?.enabled || provider.issuer !== grant.issuer || provider.client_id !== grant.client_id) {
      await end("the identity provider that signed them in was turned off or replaced");
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
      if (error instanceof SealingError) {
        // No key opens it (they were rotated past it): it can never be spent, only dropped.
        await drop();
      } else if (error instanceof oidc.ResponseBodyError && error.error === "invalid_grant") {
        if (grant.asking) {
          await drop();
          ctx.logger.warn(
            { ...owner, issuer: grant.issuer },
            "the identity provider refused a refresh token whose last refresh went unanswered: grant dropped, access kept",
          );
        } else {
          await end("the identity provider refused the sign-in's grant (invalid_grant)");
        }
      } else {
        // An answer (another OAuth error) spent nothing; no answer may have.
        if (error instanceof oidc.ResponseBodyError)
          await IdentityGrant.updateOne(mine, { $set: { asking: false } });
        ctx.logger.warn(
          { err: error, ...owner, issuer: grant.issuer },
          "the identity provider could not be asked about a user; asked again later",
        );
      }
      return;
    }
    await IdentityGrant.updateOne(mine, {
      $set: {
        asking: false,
        // A provider that rotates refresh tokens answers a new one: the old one is spent.
        ...(refreshed.refresh_token
          ? { sealed_refresh_token: seal(ctx.sealingKey, refreshed.refresh_token, aad) }
          : {}),
      },
    });
  };

  /** Ends the user's signed-in access, its entry's intent stored first: a stop in between is recovered. */
  const endAccess = async (
    grant: IdentityGrantDoc,
    mine: { _id: string; checked_at: Date },
    why: { email: string; reason: string },
  ) => {
    const target = { type: "user" as const, id: grant.user_id };
    const pending = await ctx.audit.begin({
      account_id: grant.account_id,
      actor: { user_id: grant.user_id, email: why.email },
      action: ENDED_BY_PROVIDER,
      target,
      before: undefined,
    });
    if (!(await IdentityGrant.deleteOne(mine)).deletedCount) {
      // A sign-in replaced the grant meanwhile: the provider vouched for the user again.
      await ctx.audit.settle(pending, { outcome: "failed", error_code: "sign_in.replaced" }, undefined);
      return;
    }
    await endSignedInAccess(ctx, grant.account_id, grant.user_id);
    await ctx.audit.settle(pending, { outcome: "succeeded", error_code: "invalid_grant" }, undefined);
    ctx.logger.info(
      { account_id: grant.account_id, user_id: grant.user_id, issuer: grant.issuer, reason: why.reason },
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
      const queue = [...due];
      const worker = async () => {
        for (let grant = queue.shift(); grant; grant = queue.shift()) {
          await ask(grant).catch((error: unknown) =>
            ctx.logger.warn({ err: error, user_id: grant?.user_id }, "asking the identity provider failed"),
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
    // A refresh under way finishes (its rotated token kept) before the process stops.
    stop: async () => {
      clearInterval(timer);
      await sweeping;
    },
  };
}
