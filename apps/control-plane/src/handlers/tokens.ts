import { type Caller, ControlPlane, notFound } from "@agentnet/contracts";
import { hashToken } from "@agentnet/service-kit";
import { handleChange, handleCreate } from "../audit/changes";
import { requireLongLivedCredential, requireTokenAccess } from "../domain/access";
import { expiresAfterDays, generateToken } from "../domain/tokens";
import { toToken } from "../store/views";
import { type HandlerContext, handle, revokeCallers } from "./context";

export function registerTokenHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const loadTokenOwner = async (caller: Caller, userId: string) => {
    const user = await models.User.findOne(
      { _id: userId, account_id: caller.account_id },
      { role: 1 },
    ).lean();
    if (!user) throw notFound("user");
    requireTokenAccess(caller, { id: user._id, role: user.role });
    return user;
  };

  handle(ctx, ControlPlane.tokensList, async ({ caller, user_id }) => {
    const user = await loadTokenOwner(caller, user_id);
    const tokens = await models.Token.find({ account_id: caller.account_id, user_id: user._id })
      .sort({ created_at: 1 })
      .lean();
    return tokens.map(toToken);
  });

  handleCreate(ctx, ControlPlane.tokensCreate, async ({ caller, user_id, body }, _msg, id) => {
    requireLongLivedCredential(caller);
    const user = await loadTokenOwner(caller, user_id);
    const plain = generateToken();
    const created = await models.Token.create({
      _id: id,
      account_id: caller.account_id,
      user_id: user._id,
      name: body.name,
      hash: hashToken(plain),
      expires_at: expiresAfterDays(body.expires_in),
      created_by: caller.user_id,
    });
    return { plain_token: plain, personal_access_token: toToken(created.toObject()) };
  });

  handleChange(
    ctx,
    ControlPlane.tokensDelete,
    { id: (r) => r.token_id },
    async ({ caller, user_id, token_id }) => {
      const user = await loadTokenOwner(caller, user_id);
      const deleted = await models.Token.findOneAndDelete({
        _id: token_id,
        account_id: caller.account_id,
        user_id: user._id,
      }).lean();
      if (!deleted) throw notFound("token");
      await revokeCallers(ctx, caller.account_id, { tokenHashes: [deleted.hash] });
      return {};
    },
  );
}
