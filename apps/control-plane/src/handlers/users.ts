import {
  type Caller,
  ControlPlane,
  conflict,
  forbidden,
  hasAccountWideGrant,
  notFound,
  unprocessable,
} from "@agentnet/contracts";
import { handleChange, handleCreate } from "../audit/changes";
import { requireRoleChangeAllowed, requireWriter } from "../domain/access";
import { isDuplicateKey, type UserDoc } from "../store/models";
import { forgetSignIns } from "../store/sign-in-models";
import { toUser } from "../store/views";
import {
  announceConfigChange,
  createListingBook,
  type HandlerContext,
  handle,
  loadOwned,
  revokeCallers,
} from "./context";

export function registerUserHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const loadUser = (caller: Caller, userId: string) =>
    loadOwned<UserDoc>(models.User, caller, userId, "user");

  /** Group ids a user is put in must be groups of the same account. */
  const requireGroupsExist = async (accountId: string, groupIds: string[]) => {
    const unique = [...new Set(groupIds)];
    const found = await models.Group.countDocuments({ account_id: accountId, _id: { $in: unique } });
    if (found !== unique.length) {
      throw unprocessable(
        "user.unknown_group",
        "auto_groups holds a group that does not exist in this account",
        [{ path: "auto_groups", message: "unknown group id" }],
      );
    }
    return unique;
  };

  /** The last owner can be neither demoted, blocked nor deleted: an account always has one. */
  const requireAnotherOwner = async (accountId: string, userId: string) => {
    const owners = await models.User.countDocuments({
      account_id: accountId,
      role: "owner",
      _id: { $ne: userId },
    });
    if (owners === 0)
      throw conflict("user.last_owner", "the account's last owner cannot be removed or demoted");
  };

  // Keyed by caller: each sees itself as the current user.
  const listings = createListingBook(ctx);

  handle(ctx, ControlPlane.usersList, async ({ caller, page, version }) => {
    // A regular user sees only themself, as in NetBird.
    const filter = hasAccountWideGrant(caller.role)
      ? { account_id: caller.account_id }
      : { account_id: caller.account_id, _id: caller.user_id };
    return listings.page(`${caller.account_id}/${caller.user_id}`, { page, version }, async () => {
      const users = await models.User.find(filter).sort({ created_at: 1, _id: 1 }).lean();
      return JSON.stringify(users.map((user) => toUser(user, caller.user_id)));
    });
  });

  handle(ctx, ControlPlane.usersGet, async ({ caller, user_id }) => {
    if (!hasAccountWideGrant(caller.role) && user_id !== caller.user_id) throw notFound("user");
    return toUser(await loadUser(caller, user_id), caller.user_id);
  });

  handleCreate(ctx, ControlPlane.usersCreate, async ({ caller, body }, _msg, id) => {
    requireRoleChangeAllowed(caller, undefined, body.role);
    const autoGroups = await requireGroupsExist(caller.account_id, body.auto_groups);
    try {
      const created = await models.User.create({
        _id: id,
        account_id: caller.account_id,
        email: body.email,
        name: body.name ?? body.email,
        role: body.role,
        auto_groups: autoGroups,
        is_service_user: body.is_service_user,
      });
      announceConfigChange(ctx, caller.account_id);
      return toUser(created.toObject(), caller.user_id);
    } catch (error) {
      if (isDuplicateKey(error))
        throw conflict("user.exists", `a user with email ${body.email} already exists`);
      throw error;
    }
  });

  handleChange(ctx, ControlPlane.usersUpdate, { id: (r) => r.user_id }, async ({ caller, user_id, body }) => {
    requireWriter(caller);
    const user = await loadUser(caller, user_id);
    if (user.role !== body.role) requireRoleChangeAllowed(caller, user.role, body.role);
    if (user.role === "owner" && caller.role !== "owner")
      throw forbidden("only an owner may change an owner");
    if (user.role === "owner" && (body.role !== "owner" || body.is_blocked)) {
      await requireAnotherOwner(caller.account_id, user._id);
    }
    if (body.is_blocked && user._id === caller.user_id) {
      throw unprocessable("user.block_self", "you cannot block yourself");
    }
    const autoGroups = await requireGroupsExist(caller.account_id, body.auto_groups);
    const updated = await models.User.findOneAndUpdate(
      { _id: user._id, account_id: caller.account_id },
      {
        $set: {
          role: body.role,
          auto_groups: autoGroups,
          is_blocked: body.is_blocked,
          ...(body.name ? { name: body.name } : {}),
        },
      },
      { new: true },
    ).lean();
    if (!updated) throw notFound("user");
    // A cached caller carries the user's role, groups and name, and exists only while unblocked.
    await revokeCallers(ctx, caller.account_id, { userIds: [user._id] });
    announceConfigChange(ctx, caller.account_id);
    return toUser(updated, caller.user_id);
  });

  handleChange(ctx, ControlPlane.usersDelete, { id: (r) => r.user_id }, async ({ caller, user_id }) => {
    requireWriter(caller);
    const user = await loadUser(caller, user_id);
    if (user._id === caller.user_id) throw unprocessable("user.delete_self", "you cannot delete yourself");
    if (user.role === "owner") {
      if (caller.role !== "owner") throw forbidden("only an owner may delete an owner");
      await requireAnotherOwner(caller.account_id, user._id);
    }
    await models.Token.deleteMany({ account_id: caller.account_id, user_id: user._id });
    await models.McpUserCredential.deleteMany({ account_id: caller.account_id, user_id: user._id });
    await forgetSignIns(models, { account_id: caller.account_id, user_id: user._id });
    await models.BudgetRule.updateMany(
      { account_id: caller.account_id, target_users: user._id },
      { $pull: { target_users: user._id } },
    );
    await models.User.deleteOne({ _id: user._id, account_id: caller.account_id });
    await revokeCallers(ctx, caller.account_id, { userIds: [user._id] });
    announceConfigChange(ctx, caller.account_id);
    return {};
  });
}
