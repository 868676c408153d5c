import type { Group, User } from "@agentnet/contracts";
import { useEffect, useRef, useState } from "react";
import { ApiKeys } from "../../components/api-keys";
import { ConfirmDelete } from "../../components/confirm";
import { Badge, FormError, LoadState, RowActions, ScrollableTable } from "../../components/ui";
import { userActions } from "../../domain/team-access";
import { type Loaded, useSubmit } from "../../hooks";
import { roleLabel, useSession } from "../../session";
import { UserForm } from "./user-form";

const labelOf = (user: User) => user.name || user.email;

/** The account's users with what the signed-in user may do to each, and one user's API keys. */
export function UsersSection(props: { users: Loaded<User[]>; groups: Group[]; onChanged: () => void }) {
  const { api, me, canWrite } = useSession();
  const [editing, setEditing] = useState<{ user: User | undefined } | undefined>();
  const [deleting, setDeleting] = useState<User | undefined>();
  const [keysOf, setKeysOf] = useState<User | undefined>();
  const action = useSubmit();
  const users = props.users.data;
  const groupName = (id: string) => props.groups.find((g) => g.id === id)?.name ?? id;
  const setBlocked = (user: User, blocked: boolean) =>
    void action.run(async () => {
      await api.updateUser(user.id, { role: user.role, auto_groups: user.auto_groups, is_blocked: blocked });
      props.onChanged();
    });
  return (
    <>
      <section aria-labelledby="users-title">
        <h2 id="users-title">Users</h2>
        <LoadState loading={props.users.loading && !users} error={props.users.error} what="users" />
        <FormError error={action.error} />
        {editing ? (
          <UserForm
            existing={editing.user}
            groups={props.groups}
            onCancel={() => setEditing(undefined)}
            onDone={() => {
              setEditing(undefined);
              props.onChanged();
            }}
          />
        ) : null}
        {users && !editing ? (
          <>
            {canWrite ? (
              <button type="button" onClick={() => setEditing({ user: undefined })}>
                Invite user
              </button>
            ) : null}
            <ScrollableTable label="Users" columns={["Name", "Email", "Role", "Groups", "Status"]} actions>
              {users.map((user) => {
                const can = userActions(me, user);
                const label = labelOf(user);
                return (
                  <tr key={user.id}>
                    <td>
                      {label}
                      {user.is_current ? " (you)" : ""}
                    </td>
                    <td>{user.email}</td>
                    <td>{roleLabel(user.role)}</td>
                    <td>{user.auto_groups.map(groupName).join(", ") || "—"}</td>
                    <td>
                      {user.is_blocked ? <Badge tone="bad">blocked</Badge> : <Badge tone="ok">active</Badge>}
                    </td>
                    <RowActions
                      name={label}
                      onEdit={can.edit ? () => setEditing({ user }) : undefined}
                      onDelete={can.remove ? () => setDeleting(user) : undefined}
                    >
                      {can.tokens ? (
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`API keys of ${label}`}
                          onClick={() => setKeysOf(user)}
                        >
                          API keys
                        </button>
                      ) : null}
                      {can.block ? (
                        <button
                          type="button"
                          className="ghost"
                          aria-label={`${user.is_blocked ? "Unblock" : "Block"} ${label}`}
                          disabled={action.busy}
                          onClick={() => setBlocked(user, !user.is_blocked)}
                        >
                          {user.is_blocked ? "Unblock" : "Block"}
                        </button>
                      ) : null}
                      {/* Only shown when Delete is not (see userActions), so it still ends the cell. */}
                      {can.refusal ? <span className="hint">{can.refusal}</span> : null}
                    </RowActions>
                  </tr>
                );
              })}
            </ScrollableTable>
            <p className="hint table-note">
              A blocked user's API keys stop working until they are unblocked. Deleting a user revokes their
              keys and takes them off every budget rule.
            </p>
          </>
        ) : null}
      </section>
      {keysOf ? (
        // Keyed by user: another user's keys start afresh, never showing the last one's new secret.
        <UserKeys
          key={keysOf.id}
          user={keysOf}
          self={keysOf.id === me.id}
          onClose={() => setKeysOf(undefined)}
        />
      ) : null}
      {deleting ? (
        <ConfirmDelete
          noun="user"
          name={labelOf(deleting)}
          usedBy={[]}
          busy={action.busy}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() =>
            void action
              .run(async () => {
                await api.deleteUser(deleting.id);
                if (keysOf?.id === deleting.id) setKeysOf(undefined);
                props.onChanged();
              })
              .finally(() => setDeleting(undefined))
          }
        />
      ) : null}
    </>
  );
}

/** One user's API keys below the table; its heading takes focus so the change is announced. */
function UserKeys(props: { user: User; self: boolean; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const label = labelOf(props.user);
  useEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <section className="card team-section" aria-labelledby="user-keys-title">
      <div className="section-head">
        <h2 id="user-keys-title" ref={heading} tabIndex={-1}>
          API keys of {label}
        </h2>
        <button type="button" className="ghost" onClick={props.onClose}>
          Close API keys
        </button>
      </div>
      <ApiKeys userId={props.user.id} self={props.self} label={`API keys of ${label}`} />
    </section>
  );
}
