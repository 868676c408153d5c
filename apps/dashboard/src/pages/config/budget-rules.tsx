import { type BudgetRule, capsSomething, type Group, isAccountWide } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { CrudPage } from "../../components/crud";
import { useFieldErrors } from "../../components/field-errors";
import { LimitsEditor, limitsSummary } from "../../components/limits-editor";
import { Badge, Check, Field, FormActions, FormError, MultiCheck } from "../../components/ui";
import { emptyLimits, validateLimits } from "../../domain/limits";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";

export function BudgetRulesPage() {
  const { api, users } = useSession();
  const loaded = useLoad(() => api.budgetRules.list(), []);
  const groups = useLoad(() => api.groups(), []);
  const groupName = (id: string) => groups.data?.find((g) => g.id === id)?.name ?? id;
  const userName = (id: string) => users.find((u) => u.id === id)?.email ?? id;
  return (
    <CrudPage
      title="Budget rules"
      lede="Account-level token and USD caps on groups, users or the whole account."
      noun="budget rule"
      empty="Add one to cap how many tokens or dollars a group or user can spend per window."
      loaded={loaded}
      remove={(id) => api.budgetRules.remove(id)}
      columns={[
        { label: "Name", cell: (r) => r.name },
        {
          label: "Applies to",
          cell: (r) =>
            isAccountWide(r)
              ? "whole account"
              : [...r.target_groups.map(groupName), ...r.target_users.map(userName)].join(", "),
        },
        { label: "Limits", cell: (r) => limitsSummary(r.limits) },
        {
          label: "State",
          cell: (r) => (r.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="muted">disabled</Badge>),
        },
      ]}
      form={(existing, done, cancel) => (
        <BudgetRuleForm existing={existing} groups={groups.data ?? []} onDone={done} onCancel={cancel} />
      )}
    />
  );
}

function BudgetRuleForm(props: {
  existing: BudgetRule | undefined;
  groups: Group[];
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api, users } = useSession();
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [enabled, setEnabled] = useState(e?.enabled ?? true);
  const [targetGroups, setTargetGroups] = useState(e?.target_groups ?? []);
  const [targetUsers, setTargetUsers] = useState(e?.target_users ?? []);
  const [limits, setLimits] = useState(e?.limits ?? emptyLimits());
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateLimits(limits, "limits.");
    if (name.trim() === "") found.name = "enter a name";
    if (!errors.submitted(found)) return;
    const body = { name, enabled, target_groups: targetGroups, target_users: targetUsers, limits };
    void submit.run(async () => {
      if (e) await api.budgetRules.update(e.id, body);
      else await api.budgetRules.create(body);
      props.onDone();
    });
  };
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={e ? `Edit budget rule ${e.name}` : "New budget rule"}
      noValidate
    >
      <h2>{e ? `Edit ${e.name}` : "New budget rule"}</h2>
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <Field label="Name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(ev) => setName(ev.target.value)} />}
      </Field>
      <Check label="Enabled" name="enabled" checked={enabled} onChange={setEnabled} />
      <p className="hint">No groups and no users selected means the rule covers the whole account.</p>
      <div className="grid-2">
        <MultiCheck
          legend="Target groups"
          options={props.groups.map((g) => ({ id: g.id, label: g.name }))}
          selected={targetGroups}
          onChange={setTargetGroups}
          empty="No groups yet."
          {...errors.field("target_groups")}
        />
        <MultiCheck
          legend="Target users"
          options={users.map((u) => ({ id: u.id, label: u.name || u.email }))}
          selected={targetUsers}
          onChange={setTargetUsers}
          empty="No users yet."
          {...errors.field("target_users")}
        />
      </div>
      <LimitsEditor
        value={limits}
        onChange={setLimits}
        error={errors.error}
        problem={errors.error("limits")}
      />
      {/* Stored as the spec allows, but a rule that caps nothing never refuses a request. */}
      {capsSomething(limits) ? null : (
        <p className="hint" role="status">
          This rule caps nothing yet: enforce a token, spending or tool-call cap above 0 for it to apply.
        </p>
      )}
      <FormActions
        busy={submit.busy}
        noun="budget rule"
        editing={e !== undefined}
        onCancel={props.onCancel}
      />
    </form>
  );
}
