import type { Group, IdentityProvider } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { ConfirmDelete } from "../components/confirm";
import { useFieldErrors } from "../components/field-errors";
import { Badge, Check, CopyButton, Field, FormError, LoadState, SaveStatus } from "../components/ui";
import { formatDateTime } from "../domain/format";
import {
  callbackUrl,
  draftOf,
  type IdentityProviderDraft,
  identityProviderBody,
  SIGN_IN_ROLES,
  type SignInRole,
} from "../domain/identity-provider";
import { useLoad, useSubmit } from "../hooks";
import { roleLabel, useSession } from "../session";

/**
 * Sign-in with the account's OpenID Connect provider (docs/API.md "Sign-in with your identity
 * provider"): only the owner sets it (whoever names it decides who may sign in as anyone); admins
 * and auditors read it. The client secret is write-only.
 */
export function IdentityProviderSection() {
  const { api, me } = useSession();
  const canWrite = me.role === "owner";
  const stored = useLoad(() => api.identityProvider(), []);
  const groups = useLoad(() => api.groups(), []);
  const [removing, setRemoving] = useState(false);
  const removal = useSubmit();
  const loaded = !stored.loading || stored.data !== undefined;
  return (
    <section className="card" aria-labelledby="idp-settings-title">
      <h2 id="idp-settings-title">Sign-in with your identity provider</h2>
      <p className="note">
        Your people sign in to the dashboard through your OpenID Connect provider; a user is made at their
        first sign-in and their groups follow the provider's groups claim. API tokens keep working. Register
        this redirect URI for the client at your provider: <code>{callbackUrl(window.location.origin)}</code>{" "}
        <CopyButton text={callbackUrl(window.location.origin)} what="the redirect URI" />
      </p>
      <LoadState loading={stored.loading && !stored.data} error={stored.error} what="the identity provider" />
      {loaded && !stored.error ? (
        <IdentityProviderForm
          key={stored.data?.updated_at ?? "new"}
          stored={stored.data}
          groups={groups.data ?? []}
          canWrite={canWrite}
          onSaved={stored.reload}
        />
      ) : null}
      {stored.data && canWrite ? (
        <>
          <FormError error={removal.error} />
          <button type="button" className="danger idp-remove" onClick={() => setRemoving(true)}>
            Remove the identity provider…
          </button>
        </>
      ) : null}
      {removing ? (
        <ConfirmDelete
          noun="identity provider"
          name={stored.data?.issuer ?? ""}
          usedBy={[]}
          busy={removal.busy}
          onCancel={() => setRemoving(false)}
          onConfirm={() =>
            void removal
              .run(async () => {
                await api.removeIdentityProvider();
                stored.reload();
              })
              .finally(() => setRemoving(false))
          }
        />
      ) : null}
    </section>
  );
}

function IdentityProviderForm(props: {
  stored: IdentityProvider | undefined;
  groups: Group[];
  canWrite: boolean;
  onSaved: () => void;
}) {
  const { api } = useSession();
  const { canWrite, stored } = props;
  const [draft, setDraft] = useState<IdentityProviderDraft>(() => draftOf(stored));
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const set = <K extends keyof IdentityProviderDraft>(key: K, value: IdentityProviderDraft[K]) =>
    setDraft((before) => ({ ...before, [key]: value }));
  const setRow = (index: number, row: Partial<IdentityProviderDraft["group_mapping"][number]>) => {
    set(
      "group_mapping",
      draft.group_mapping.map((before, i) => (i === index ? { ...before, ...row } : before)),
    );
    errors.edit(`group_mapping.${index}`);
  };
  const secretSet = stored?.client_secret_set === true;

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const found: Record<string, string> = {};
    // The stored secret stays only with its provider and client (the API refuses it elsewhere).
    const sameClient = stored?.issuer === draft.issuer.trim() && stored.client_id === draft.client_id.trim();
    if (draft.client_secret.trim() === "" && !sameClient)
      found.client_secret = stored
        ? "A new issuer or client ID needs its client secret again."
        : "The client secret your provider gave for this client.";
    draft.group_mapping.forEach((row, i) => {
      if (row.claim_value.trim() !== "" && row.group_id === "")
        found[`group_mapping.${i}.group_id`] = "Pick the group this value stands for.";
      if (row.claim_value.trim() === "" && row.group_id !== "")
        found[`group_mapping.${i}.claim_value`] = "The value of the groups claim.";
    });
    if (!errors.submitted(found)) return;
    void submit.run(async () => {
      await api.saveIdentityProvider(identityProviderBody(draft));
      setSaved(true);
      props.onSaved();
    });
  };

  return (
    <form className="form" onSubmit={onSubmit} onChange={errors.onChange} aria-label="Identity provider">
      {stored ? (
        <p>
          <Badge tone={stored.enabled ? "ok" : "muted"}>{stored.enabled ? "On" : "Off"}</Badge>{" "}
          <span className="hint">Saved {formatDateTime(stored.updated_at)}</span>
        </p>
      ) : (
        <p className="hint">No identity provider is set: people sign in with API tokens only.</p>
      )}
      <FormError error={errors.apiError} invalid={errors.invalid} invalidNoun="fields" />
      <fieldset className="idp-fields" disabled={!canWrite}>
        <Field
          label="Issuer"
          {...errors.field("issuer")}
          hint="https:// (http:// only on loopback); its /.well-known/openid-configuration names the rest"
        >
          {(c) => (
            <input
              {...c}
              type="url"
              placeholder="https://login.example.com/realms/corp"
              value={draft.issuer}
              onChange={(e) => set("issuer", e.target.value)}
              required
            />
          )}
        </Field>
        <Field label="Client ID" {...errors.field("client_id")}>
          {(c) => (
            <input
              {...c}
              value={draft.client_id}
              onChange={(e) => set("client_id", e.target.value)}
              required
            />
          )}
        </Field>
        <Field
          label="Client secret"
          {...errors.field("client_secret")}
          hint="Write-only: never shown again once saved."
        >
          {(c) => (
            <input
              {...c}
              type="password"
              autoComplete="new-password"
              placeholder={secretSet ? "set; leave empty to keep" : ""}
              value={draft.client_secret}
              onChange={(e) => set("client_secret", e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Allowed email domains"
          {...errors.field("allowed_email_domains")}
          hint="Separated by commas; empty: any email the provider vouches for. A sign-in by email finds the account by its domain."
        >
          {(c) => (
            <input
              {...c}
              placeholder="example.com"
              value={draft.allowed_email_domains}
              onChange={(e) => set("allowed_email_domains", e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Default role"
          {...errors.field("default_role")}
          hint="of a user made by their first sign-in"
        >
          {(c) => (
            <select
              {...c}
              value={draft.default_role}
              onChange={(e) => set("default_role", e.target.value as SignInRole)}
            >
              {SIGN_IN_ROLES.map((role) => (
                <option key={role} value={role}>
                  {roleLabel(role)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Groups claim"
          {...errors.field("groups_claim")}
          hint="the ID token claim listing the user's groups"
        >
          {(c) => (
            <input
              {...c}
              value={draft.groups_claim}
              onChange={(e) => set("groups_claim", e.target.value)}
              required
            />
          )}
        </Field>
        <GroupMapping
          rows={draft.group_mapping}
          groups={props.groups}
          error={errors.error}
          onChange={setRow}
          onAdd={() => set("group_mapping", [...draft.group_mapping, { claim_value: "", group_id: "" }])}
          onRemove={(index) => {
            set(
              "group_mapping",
              draft.group_mapping.filter((_, i) => i !== index),
            );
            errors.edit("group_mapping");
          }}
        />
        <Check
          label="Sign-in with the identity provider is on"
          {...errors.field("enabled")}
          checked={draft.enabled}
          onChange={(value) => set("enabled", value)}
        />
      </fieldset>
      <SaveStatus busy={submit.busy} saved={saved} />
      {canWrite ? (
        <button type="submit" disabled={submit.busy}>
          Save identity provider
        </button>
      ) : (
        <p className="hint">Only the owner changes the identity provider.</p>
      )}
    </form>
  );
}

/** Which agentnet group each value of the groups claim stands for, one row per value. */
function GroupMapping(props: {
  rows: IdentityProviderDraft["group_mapping"];
  groups: Group[];
  error: (path: string) => string | undefined;
  onChange: (index: number, row: Partial<IdentityProviderDraft["group_mapping"][number]>) => void;
  onAdd: () => void;
  onRemove: (index: number) => void;
}) {
  return (
    <fieldset className="group-mapping">
      <legend>Group mapping</legend>
      <p className="hint">Values of the claim not listed here are ignored; groups given by hand stay.</p>
      {props.error("group_mapping") ? <p className="field-error">{props.error("group_mapping")}</p> : null}
      {props.rows.map((row, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id; a row keeps its place while edited.
        <div key={i} className="group-mapping-row">
          <Field label={`Claim value ${i + 1}`} error={props.error(`group_mapping.${i}.claim_value`)}>
            {(c) => (
              <input
                {...c}
                value={row.claim_value}
                onChange={(e) => props.onChange(i, { claim_value: e.target.value })}
              />
            )}
          </Field>
          <Field label={`Group ${i + 1}`} error={props.error(`group_mapping.${i}.group_id`)}>
            {(c) => (
              <select
                {...c}
                value={row.group_id}
                onChange={(e) => props.onChange(i, { group_id: e.target.value })}
              >
                <option value="">Pick a group…</option>
                {props.groups.map((group) => (
                  <option key={group.id} value={group.id}>
                    {group.name}
                  </option>
                ))}
                {row.group_id && !props.groups.some((group) => group.id === row.group_id) ? (
                  <option value={row.group_id}>{row.group_id} (no such group)</option>
                ) : null}
              </select>
            )}
          </Field>
          <button
            type="button"
            className="ghost"
            aria-label={`Remove mapping ${i + 1}`}
            onClick={() => props.onRemove(i)}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={props.onAdd}>
        Add a mapping
      </button>
    </fieldset>
  );
}
