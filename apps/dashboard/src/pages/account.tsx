import { type FormEvent, useState } from "react";
import { Check, FormError, Progress } from "../components/ui";
import { fieldError } from "../domain/form-errors";
import { formatDateTime } from "../domain/format";
import { useSubmit } from "../hooks";
import { useSession } from "../session";

/** Account settings, with the agent-network dashboard flags. */
export function AccountPage() {
  const { api, account, canWrite, refreshAccount } = useSession();
  const s = account.settings;
  const [agentNetwork, setAgentNetwork] = useState(s.dashboard_features?.agent_network !== false);
  const [only, setOnly] = useState(s.agent_network_only === true);
  const [viewBlocked, setViewBlocked] = useState(s.regular_users_view_blocked);
  const [local, setLocal] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();
  const err = (path: string) => fieldError(local, submit.error, path);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const errors: Record<string, string> = {};
    if (only && !agentNetwork)
      errors["settings.dashboard_features.agent_network"] =
        "Agent-network-only needs the agent-network section shown.";
    setLocal(errors);
    if (Object.keys(errors).length > 0) return;
    const { embedded_idp_enabled: _idp, local_auth_disabled: _local, ...writable } = s;
    const settings = {
      ...writable,
      regular_users_view_blocked: viewBlocked,
      agent_network_only: only,
      dashboard_features: { ...s.dashboard_features, agent_network: agentNetwork },
    };
    void submit.run(async () => {
      await api.updateAccount(account.id, { settings });
      setSaved(true);
      await refreshAccount();
    });
  };
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account settings</h1>
      <dl className="fields card">
        <div>
          <dt>Account</dt>
          <dd>
            <code>{account.id}</code>
          </dd>
        </div>
        <div>
          <dt>Domain</dt>
          <dd>
            {account.domain} ({account.domain_category})
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDateTime(account.created_at)}</dd>
        </div>
      </dl>
      <form className="card form" onSubmit={onSubmit} aria-label="Account settings">
        <h2>Dashboard</h2>
        <FormError error={submit.error} invalid={local} invalidNoun="settings" />
        <Check
          label="Show the agent-network section"
          checked={agentNetwork}
          disabled={!canWrite}
          onChange={setAgentNetwork}
        />
        {err("settings.dashboard_features.agent_network") ? (
          <p className="field-error">{err("settings.dashboard_features.agent_network")}</p>
        ) : null}
        <Check
          label="Agent network only"
          hint="hides the other sections of the dashboard"
          checked={only}
          disabled={!canWrite}
          onChange={setOnly}
        />
        {err("settings.agent_network_only") ? (
          <p className="field-error">{err("settings.agent_network_only")}</p>
        ) : null}
        <Check
          label="Block regular users from viewing other parts of the system"
          checked={viewBlocked}
          disabled={!canWrite}
          onChange={setViewBlocked}
        />
        {submit.busy ? <Progress label="Saving…" /> : null}
        {saved ? (
          <p role="status" className="ok">
            Saved.
          </p>
        ) : null}
        {canWrite ? (
          <button type="submit" disabled={submit.busy}>
            Save account settings
          </button>
        ) : (
          <p className="hint">Only owners and admins change account settings.</p>
        )}
      </form>
    </section>
  );
}
