import { type FormEvent, useState } from "react";
import { useFieldErrors } from "../components/field-errors";
import { Check, FormError, SaveStatus } from "../components/ui";
import { formatDateTime } from "../domain/format";
import { useSubmit } from "../hooks";
import { useSession } from "../session";
import { IdentityProviderSection } from "./identity-provider";

/** Account settings, with the agent-network dashboard flags. */
export function AccountPage() {
  const { api, account, canWrite, refreshAccount } = useSession();
  const s = account.settings;
  const [agentNetwork, setAgentNetwork] = useState(s.dashboard_features?.agent_network !== false);
  const [only, setOnly] = useState(s.agent_network_only === true);
  const [viewBlocked, setViewBlocked] = useState(s.regular_users_view_blocked);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  // The two flags' rule is one finding, shown on the section flag: fixing either flag clears it.
  const onOnlyChange = (value: boolean) => {
    setOnly(value);
    errors.edit("settings.dashboard_features.agent_network");
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const found: Record<string, string> = {};
    if (only && !agentNetwork)
      found["settings.dashboard_features.agent_network"] =
        "Agent-network-only needs the agent-network section shown.";
    if (!errors.submitted(found)) return;
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
      <form
        className="card form"
        onSubmit={onSubmit}
        onChange={errors.onChange}
        aria-label="Account settings"
      >
        <h2>Dashboard</h2>
        <FormError error={errors.apiError} invalid={errors.invalid} invalidNoun="settings" />
        <Check
          label="Show the agent-network section"
          {...errors.field("settings.dashboard_features.agent_network")}
          checked={agentNetwork}
          disabled={!canWrite}
          onChange={setAgentNetwork}
        />
        <Check
          label="Agent network only"
          {...errors.field("settings.agent_network_only")}
          hint="hides the other sections of the dashboard"
          checked={only}
          disabled={!canWrite}
          onChange={onOnlyChange}
        />
        <Check
          label="Block regular users from viewing other parts of the system"
          {...errors.field("settings.regular_users_view_blocked")}
          checked={viewBlocked}
          disabled={!canWrite}
          onChange={setViewBlocked}
        />
        <SaveStatus busy={submit.busy} saved={saved} />
        {canWrite ? (
          <button type="submit" disabled={submit.busy}>
            Save account settings
          </button>
        ) : (
          <p className="hint">Only owners and admins change account settings.</p>
        )}
      </form>
      <IdentityProviderSection />
    </section>
  );
}
