import { useLoad } from "../hooks";
import { useSession } from "../session";
import { GroupsSection } from "./team/groups";
import { UsersSection } from "./team/users";

/** Users, their roles, groups and API keys, and the groups policies and budget rules pick from. */
export function TeamPage() {
  const { api, canWrite } = useSession();
  const users = useLoad(() => api.users(), []);
  const groups = useLoad(() => api.groups(), []);
  // A user's groups change the groups' member counts, and a deleted group leaves its members.
  const reloadBoth = () => {
    users.reload();
    groups.reload();
  };
  return (
    <section aria-labelledby="team-title">
      <h1 id="team-title">Team</h1>
      <p className="lede">
        Who may use the gateway and this API, with which role and in which groups.
        {canWrite ? null : " Owners and admins change the team."}
      </p>
      <UsersSection users={users} groups={groups.data ?? []} onChanged={reloadBoth} />
      <GroupsSection groups={groups} onChanged={reloadBoth} />
    </section>
  );
}
