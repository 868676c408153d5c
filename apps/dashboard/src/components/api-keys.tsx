import type { PersonalAccessToken, PersonalAccessTokenGenerated } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { formatDateTime } from "../domain/format";
import { isExpired, tokenExpiryError } from "../domain/team-access";
import { useLoad, useSubmit } from "../hooks";
import { useSession } from "../session";
import { useFieldErrors } from "./field-errors";
import { trapTab, useModalDialog } from "./focus-trap";
import { ShownOncePanel } from "./shown-once-panel";
import { Badge, EmptyState, Field, FormError, LoadState, Progress, RowActions, ScrollableTable } from "./ui";

/**
 * One user's API keys (personal access tokens): the list, a form for a new one whose secret is
 * shown once, and revoking with a confirmation. `self` when they are the signed-in user's own.
 */
export function ApiKeys(props: { userId: string; self: boolean; label: string }) {
  const { api } = useSession();
  const tokens = useLoad(() => api.tokens(props.userId), [props.userId]);
  const [created, setCreated] = useState<PersonalAccessTokenGenerated | undefined>();
  const [revoking, setRevoking] = useState<PersonalAccessToken | undefined>();
  const revoke = useSubmit();
  const now = new Date();
  const list = tokens.data;
  return (
    <>
      <LoadState loading={tokens.loading && !list} error={tokens.error} what="API keys" />
      <FormError error={revoke.error} />
      {list && list.length === 0 ? (
        <EmptyState title="No API keys">
          {props.self
            ? "Create one below to call the API or the gateway proxy as yourself."
            : "Create one below and hand it to them; it acts as them, with their role."}
        </EmptyState>
      ) : null}
      {list && list.length > 0 ? (
        <ScrollableTable label={props.label} columns={["Name", "Created", "Expires", "Last used"]} actions>
          {list.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>{formatDateTime(token.created_at)}</td>
              <td>
                {formatDateTime(token.expiration_date)}{" "}
                {isExpired(token.expiration_date, now) ? <Badge tone="bad">expired</Badge> : null}
              </td>
              <td>{token.last_used ? formatDateTime(token.last_used) : "never"}</td>
              <RowActions name={token.name} deleteVerb="Revoke" onDelete={() => setRevoking(token)} />
            </tr>
          ))}
        </ScrollableTable>
      ) : null}
      {created ? (
        <ShownOncePanel
          title={`New API key “${created.personal_access_token.name}”`}
          note="Copy it now: it will not be shown again. Anyone holding it acts as its user, so keep it out of shared files and chats."
          label="API key"
          noun="key"
          value={created.plain_token}
          onClose={() => setCreated(undefined)}
        />
      ) : (
        <NewKeyForm
          userId={props.userId}
          onCreated={(generated) => {
            setCreated(generated);
            tokens.reload();
          }}
        />
      )}
      {revoking ? (
        <RevokeKeyDialog
          name={revoking.name}
          self={props.self}
          busy={revoke.busy}
          onCancel={() => setRevoking(undefined)}
          onConfirm={() =>
            void revoke
              .run(async () => {
                await api.revokeToken(props.userId, revoking.id);
                tokens.reload();
              })
              .finally(() => setRevoking(undefined))
          }
        />
      ) : null}
    </>
  );
}

function NewKeyForm(props: { userId: string; onCreated: (generated: PersonalAccessTokenGenerated) => void }) {
  const { api } = useSession();
  const [name, setName] = useState("");
  const [days, setDays] = useState("30");
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const expiry = tokenExpiryError(days);
    if (!errors.submitted(expiry ? { expires_in: expiry } : {})) return;
    void submit.run(async () => {
      props.onCreated(await api.createToken(props.userId, { name: name.trim(), expires_in: Number(days) }));
      setName("");
    });
  };
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label="New API key"
      noValidate
    >
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <div className="grid-3">
        <Field label="Key name" {...errors.field("name")} hint="Where it is used, e.g. “laptop” or “CI”.">
          {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required />}
        </Field>
        <Field label="Expires in (days)" {...errors.field("expires_in")} hint="1 to 365 days.">
          {(c) => (
            <input
              {...c}
              type="number"
              inputMode="numeric"
              min={1}
              max={365}
              value={days}
              onChange={(e) => setDays(e.target.value)}
              required
            />
          )}
        </Field>
      </div>
      {submit.busy ? <Progress label="Creating the key…" /> : null}
      <button type="submit" disabled={submit.busy}>
        Create API key
      </button>
    </form>
  );
}

/** Asks before revoking: whatever uses the key loses access, and a revoked key cannot come back. */
function RevokeKeyDialog(props: {
  name: string;
  self: boolean;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useModalDialog();
  const titleId = "revoke-key-title";
  return (
    <dialog
      ref={dialog}
      className="confirm"
      onKeyDown={trapTab}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>Revoke the API key “{props.name}”?</h2>
      <p>Anything that uses it is refused within seconds. This cannot be undone.</p>
      {props.self ? <p>If you signed in to this dashboard with it, you are signed out.</p> : null}
      <div className="actions">
        <button type="button" className="ghost" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? "Revoking…" : "Revoke key"}
        </button>
      </div>
    </dialog>
  );
}
