import { type FormEvent, useState } from "react";
import { Badge, EmptyState, Field, FormError, LoadState } from "../components/ui";
import { fieldError } from "../domain/form-errors";
import { useLoad, useSubmit } from "../hooks";
import { roleLabel, useSession } from "../session";

/** Users and groups of the account (policies and budget rules pick from these). */
export function TeamPage() {
  const { api, users, canWrite } = useSession();
  const groups = useLoad(() => api.groups(), []);
  const [name, setName] = useState("");
  const submit = useSubmit();
  const groupName = (id: string) => groups.data?.find((g) => g.id === id)?.name ?? id;
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void submit.run(async () => {
      await api.createGroup(name);
      setName("");
      groups.reload();
    });
  };
  return (
    <section aria-labelledby="team-title">
      <h1 id="team-title">Team</h1>
      <h2>Users</h2>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Groups</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.id}>
              <td>
                {u.name || "—"}
                {u.is_current ? " (you)" : ""}
              </td>
              <td>{u.email}</td>
              <td>{roleLabel(u.role)}</td>
              <td>{u.auto_groups.map(groupName).join(", ") || "—"}</td>
              <td>{u.is_blocked ? <Badge tone="bad">blocked</Badge> : <Badge tone="ok">active</Badge>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Groups</h2>
      <LoadState loading={groups.loading && !groups.data} error={groups.error} what="groups" />
      {groups.data && groups.data.length === 0 ? (
        <EmptyState title="No groups">Create one below, then add members with the API.</EmptyState>
      ) : null}
      {groups.data && groups.data.length > 0 ? (
        <ul className="chips">
          {groups.data.map((g) => (
            <li key={g.id}>
              {g.name} · {g.users_count} members
            </li>
          ))}
        </ul>
      ) : null}
      {canWrite ? (
        <form className="card form inline" onSubmit={onSubmit} aria-label="New group">
          <FormError error={submit.error} />
          <Field label="New group name" error={fieldError({}, submit.error, "name")}>
            {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required />}
          </Field>
          <button type="submit" disabled={submit.busy}>
            Create group
          </button>
        </form>
      ) : null}
    </section>
  );
}
