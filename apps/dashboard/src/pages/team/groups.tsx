import type { Group } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { ConfirmDelete, policiesUsing } from "../../components/confirm";
import { useFieldErrors } from "../../components/field-errors";
import { EmptyState, Field, FormError, LoadState, RowActions, ScrollableTable } from "../../components/ui";
import { ALL_GROUP_NAME } from "../../domain/team-access";
import { type Loaded, useSubmit } from "../../hooks";
import { useSession } from "../../session";

/** The account's groups: create, rename, and delete those no policy or budget rule uses. */
export function GroupsSection(props: { groups: Loaded<Group[]>; onChanged: () => void }) {
  const { api, canWrite } = useSession();
  const [renaming, setRenaming] = useState<Group | undefined>();
  const [deleting, setDeleting] = useState<{ group: Group; usedBy: string[] } | undefined>();
  const removal = useSubmit();
  const groups = props.groups.data;
  const own = groups?.filter((g) => g.name !== ALL_GROUP_NAME) ?? [];
  const askToDelete = (group: Group) =>
    void removal.run(async () => {
      // Read what uses the group now, not when the page opened: the dialog must not offer a delete
      // the API would refuse (and if something is added meanwhile, the API's refusal is shown).
      const [policies, rules] = await Promise.all([api.policies.list(), api.budgetRules.list()]);
      const usedBy = [
        ...policiesUsing(policies, (policy) => policy.source_groups.includes(group.id)),
        ...rules
          .filter((rule) => rule.target_groups.includes(group.id))
          .map((rule) => `budget rule “${rule.name}”`),
      ];
      setDeleting({ group, usedBy });
    });
  return (
    <section className="team-section" aria-labelledby="groups-title">
      <h2 id="groups-title">Groups</h2>
      <p className="hint">Policies and budget rules pick groups; users join them from their Edit form.</p>
      <LoadState loading={props.groups.loading && !groups} error={props.groups.error} what="groups" />
      <FormError error={removal.error} />
      {groups ? (
        <ScrollableTable label="Groups" columns={["Name", { label: "Members", numeric: true }]} actions>
          {groups.map((group) => {
            const everyone = group.name === ALL_GROUP_NAME;
            const changeable = canWrite && !everyone && renaming?.id !== group.id;
            return (
              <tr key={group.id}>
                <td>
                  {renaming?.id === group.id ? (
                    <RenameGroup
                      group={group}
                      onCancel={() => setRenaming(undefined)}
                      onDone={() => {
                        setRenaming(undefined);
                        props.onChanged();
                      }}
                    />
                  ) : (
                    group.name
                  )}
                </td>
                <td className="num">{group.users_count}</td>
                <RowActions
                  name={group.name}
                  onDelete={changeable ? () => askToDelete(group) : undefined}
                  deleteDisabled={removal.busy}
                >
                  {everyone ? (
                    <span className="hint">Every user is in it; it cannot be renamed or deleted.</span>
                  ) : null}
                  {changeable ? (
                    <button
                      type="button"
                      className="ghost"
                      aria-label={`Rename ${group.name}`}
                      onClick={() => setRenaming(group)}
                    >
                      Rename
                    </button>
                  ) : null}
                </RowActions>
              </tr>
            );
          })}
        </ScrollableTable>
      ) : null}
      {groups && own.length === 0 ? (
        <EmptyState title="No groups of your own yet">
          {canWrite
            ? "Create one below, then add users to it and name it in policies and budget rules."
            : "An owner or admin creates groups."}
        </EmptyState>
      ) : null}
      {canWrite ? <NewGroup onCreated={props.onChanged} /> : null}
      {deleting ? (
        <ConfirmDelete
          noun="group"
          name={deleting.group.name}
          usedBy={deleting.usedBy}
          busy={removal.busy}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() =>
            void removal
              .run(async () => {
                await api.deleteGroup(deleting.group.id);
                props.onChanged();
              })
              .finally(() => setDeleting(undefined))
          }
        />
      ) : null}
    </section>
  );
}

function NewGroup(props: { onCreated: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState("");
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    errors.submitted();
    void submit.run(async () => {
      await api.createGroup(name);
      setName("");
      props.onCreated();
    });
  };
  return (
    <form className="card form inline" onSubmit={onSubmit} onChange={errors.onChange} aria-label="New group">
      <FormError error={errors.apiError} />
      <Field label="New group name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required />}
      </Field>
      <button type="submit" disabled={submit.busy}>
        Create group
      </button>
    </form>
  );
}

function RenameGroup(props: { group: Group; onDone: () => void; onCancel: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState(props.group.name);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    errors.submitted();
    void submit.run(async () => {
      await api.renameGroup(props.group.id, name);
      props.onDone();
    });
  };
  return (
    <form
      className="rename"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={`Rename group ${props.group.name}`}
    >
      <FormError error={errors.apiError} />
      <Field label="New name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required />}
      </Field>
      <div className="actions">
        <button type="submit" disabled={submit.busy}>
          Save name
        </button>
        <button type="button" className="ghost" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
