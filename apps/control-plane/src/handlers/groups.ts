import { type Caller, ControlPlane, conflict, notFound, unprocessable } from "@agentnet/contracts";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import { type GroupDoc, isDuplicateKey } from "../store/models";
import { toGroup } from "../store/views";
import { announceConfigChange, type HandlerContext, handle, loadOwned, revokeCallers } from "./context";

export function registerGroupHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const allGroupId = async (accountId: string) => {
    const account = await models.Account.findById(accountId, { all_group_id: 1 }).lean();
    if (!account) throw notFound("account");
    return account.all_group_id;
  };

  /** Members of the All group are every user of the account; of others, users listing it. */
  const usersCount = async (accountId: string, groupId: string, allId: string) =>
    models.User.countDocuments(
      groupId === allId ? { account_id: accountId } : { account_id: accountId, auto_groups: groupId },
    );

  const loadGroup = (caller: Caller, groupId: string) =>
    loadOwned<GroupDoc>(models.Group, caller, groupId, "group");

  const duplicateName = (name: string) => conflict("group.exists", `a group named ${name} already exists`);

  handle(ctx, ControlPlane.groupsList, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const [groups, allId] = await Promise.all([
      models.Group.find({ account_id: caller.account_id }).sort({ created_at: 1 }).lean(),
      allGroupId(caller.account_id),
    ]);
    return Promise.all(
      groups.map(async (g) => toGroup(g, await usersCount(caller.account_id, g._id, allId))),
    );
  });

  handle(ctx, ControlPlane.groupsGet, async ({ caller, group_id }) => {
    requireAccountWideGrant(caller);
    const group = await loadGroup(caller, group_id);
    return toGroup(
      group,
      await usersCount(caller.account_id, group._id, await allGroupId(caller.account_id)),
    );
  });

  handleCreate(ctx, ControlPlane.groupsCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    try {
      const created = await models.Group.create({
        _id: id,
        account_id: caller.account_id,
        name: body.name,
      });
      announceConfigChange(ctx, caller.account_id);
      return toGroup(created.toObject(), 0);
    } catch (error) {
      if (isDuplicateKey(error)) throw duplicateName(body.name);
      throw error;
    }
  });

  handleChange(
    ctx,
    ControlPlane.groupsUpdate,
    { id: (r) => r.group_id },
    async ({ caller, group_id, body }) => {
      requireWriter(caller);
      const group = await loadGroup(caller, group_id);
      const allId = await allGroupId(caller.account_id);
      if (group._id === allId) throw unprocessable("group.all_immutable", "the All group cannot be renamed");
      try {
        const updated = await models.Group.findOneAndUpdate(
          { _id: group._id, account_id: caller.account_id },
          { $set: { name: body.name } },
          { new: true },
        ).lean();
        if (!updated) throw notFound("group");
        announceConfigChange(ctx, caller.account_id);
        return toGroup(updated, await usersCount(caller.account_id, group._id, allId));
      } catch (error) {
        if (isDuplicateKey(error)) throw duplicateName(body.name);
        throw error;
      }
    },
  );

  handleChange(ctx, ControlPlane.groupsDelete, { id: (r) => r.group_id }, async ({ caller, group_id }) => {
    requireWriter(caller);
    const group = await loadGroup(caller, group_id);
    if (group._id === (await allGroupId(caller.account_id))) {
      throw unprocessable("group.all_immutable", "the All group cannot be deleted");
    }
    const [policies, rules] = await Promise.all([
      models.Policy.find({ account_id: caller.account_id, source_groups: group._id }, { name: 1 }).lean(),
      models.BudgetRule.find({ account_id: caller.account_id, target_groups: group._id }, { name: 1 }).lean(),
    ]);
    const users = [...policies.map((p) => `policy ${p.name}`), ...rules.map((r) => `budget rule ${r.name}`)];
    if (users.length > 0) {
      throw conflict("group.in_use", `the group is used by ${users.join(", ")}; remove it from them first`);
    }
    await models.User.updateMany(
      { account_id: caller.account_id, auto_groups: group._id },
      { $pull: { auto_groups: group._id } },
    );
    await models.Group.deleteOne({ _id: group._id, account_id: caller.account_id });
    // Its members' cached callers still list it; the account's callers are looked up again.
    await revokeCallers(ctx, caller.account_id, { wholeAccount: true });
    announceConfigChange(ctx, caller.account_id);
    return {};
  });
}
