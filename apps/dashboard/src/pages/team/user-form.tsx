import type { Group, Role, User } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { useFieldErrors } from "../../components/field-errors";
import { Field, FormActions, FormError, MultiCheck } from "../../components/ui";
import { ALL_GROUP_NAME, assignableRoles } from "../../domain/team-access";
import { useSubmit } from "../../hooks";
import { roleLabel, useSession } from "../../session";

/** Invites a user (email, name, role, groups) or changes an existing one's name, role and groups. */
export function UserForm(props: {
  existing: User | undefined;
  groups: Group[];
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api, me, refreshAccount } = useSession();
  const e = props.existing;
  const [email, setEmail] = useState("");
  const [name, setName] = useState(e?.name ?? "");
  const [role, setRole] = useState<Role>(e?.role ?? "user");
  const [autoGroups, setAutoGroups] = useState<string[]>(e?.auto_groups ?? []);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  // Everyone is in the All group; it is never picked.
  const pickable = props.groups.filter((g) => g.name !== ALL_GROUP_NAME);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    errors.submitted();
    const trimmed = name.trim();
    void submit.run(async () => {
      if (e) {
        await api.updateUser(e.id, {
          role,
          auto_groups: autoGroups,
          is_blocked: e.is_blocked,
          ...(trimmed ? { name: trimmed } : {}),
        });
        // Your own role decides what the dashboard shows you.
        if (e.is_current) await refreshAccount();
      } else {
        await api.inviteUser({
          email: email.trim(),
          role,
          auto_groups: autoGroups,
          ...(trimmed ? { name: trimmed } : {}),
        });
      }
      props.onDone();
    });
  };
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={e ? `Edit user ${e.name || e.email}` : "Invite user"}
      noValidate
    >
      <h3>{e ? `Edit ${e.name || e.email}` : "Invite a user"}</h3>
      <FormError error={errors.apiError} />
      <div className="grid-3">
        {e ? null : (
          <Field label="Email" {...errors.field("email")}>
            {(c) => (
              <input
                {...c}
                type="email"
                autoComplete="off"
                value={email}
                onChange={(event) => setEmail(event.target.value)}
                required
              />
            )}
          </Field>
        )}
        <Field label="Name" {...errors.field("name")} hint={e ? undefined : "Defaults to the email."}>
          {(c) => <input {...c} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field
          label="Role"
          {...errors.field("role")}
          hint="Owners and admins change configuration and the team; auditors read everything; users see their own traffic."
        >
          {(c) => (
            <select {...c} value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {assignableRoles(me.role).map((option) => (
                <option key={option} value={option}>
                  {roleLabel(option)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <MultiCheck
        legend="Groups"
        options={pickable.map((g) => ({ id: g.id, label: g.name }))}
        selected={autoGroups}
        onChange={setAutoGroups}
        empty="No groups yet: create one under Groups below. Everyone is in All."
        {...errors.field("auto_groups")}
      />
      <FormActions busy={submit.busy} noun="user" editing={e !== undefined} onCancel={props.onCancel} />
    </form>
  );
}
