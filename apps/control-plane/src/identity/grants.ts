import { identityGrantAad, seal } from "@agentnet/sealing";
import { type HandlerContext, revokeCallers } from "../handlers/context";
import { forgetSignIns, type IdentityProviderDoc } from "../store/sign-in-models";

/** Ends a user's browser sessions and agent credentials (and the proxy tokens those minted), at once. */
export async function endSignedInAccess(
  ctx: HandlerContext,
  accountId: string,
  userId: string,
): Promise<void> {
  await forgetSignIns(ctx.models, { account_id: accountId, user_id: userId });
  await revokeCallers(ctx, accountId, { userIds: [userId] });
}

/**
 * Keeps the refresh token a sign-in got from `provider` (sealed), or drops an earlier one when
 * this sign-in got none: the latest sign-in decides how the provider is asked again.
 */
export async function keepGrant(
  ctx: HandlerContext,
  provider: Pick<IdentityProviderDoc, "account_id" | "issuer" | "client_id">,
  userId: string,
  refreshToken: string | undefined,
  now: Date,
): Promise<void> {
  const { IdentityGrant } = ctx.models;
  if (!refreshToken) {
    await IdentityGrant.deleteOne({ _id: userId });
    return;
  }
  await IdentityGrant.replaceOne(
    { _id: userId },
    {
      _id: userId,
      account_id: provider.account_id,
      user_id: userId,
      issuer: provider.issuer,
      client_id: provider.client_id,
      sealed_refresh_token: seal(ctx.sealingKey, refreshToken, identityGrantAad(provider.account_id, userId)),
      checked_at: now,
    },
    { upsert: true },
  );
}
