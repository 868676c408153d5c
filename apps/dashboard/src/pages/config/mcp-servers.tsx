import { MAX_PRICE_PER_CALL_USD, type McpServer, McpTransport } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import type { McpServerBody } from "../../api/endpoints";
import { policiesUsing } from "../../components/confirm";
import { CrudPage } from "../../components/crud";
import { useFieldErrors } from "../../components/field-errors";
import { Badge, Check, Field, FormActions, FormError } from "../../components/ui";
import { formatUsd } from "../../domain/format";
import { parseNumberField } from "../../domain/limits";
import {
  type CredentialDraft,
  credentialBody,
  credentialDraft,
  credentialKindOf,
  credentialSummary,
  TRANSPORT_LABELS,
} from "../../domain/mcp-credential";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";

/** MCP servers (docs/API.md, "MCP servers"): what agents may reach through the gateway, once a policy grants it. */
export function McpServersPage() {
  const { api } = useSession();
  const loaded = useLoad(() => api.mcpServers.list(), []);
  const policies = useLoad(() => api.policies.list(), []);
  return (
    <CrudPage
      title="MCP servers"
      lede="Tool servers agents reach through the gateway: a URL, a sealed credential and a price per call. Policies grant them to groups."
      noun="MCP server"
      empty="Add one, then grant it to groups in a policy: no server is reachable until a policy grants it."
      loaded={loaded}
      remove={(id) => api.mcpServers.remove(id)}
      usedBy={(server) =>
        policiesUsing(policies.data ?? [], (policy) =>
          policy.mcp_servers.some((grant) => grant.server_id === server.id),
        )
      }
      columns={[
        { label: "Name", cell: (s) => s.name },
        { label: "URL", cell: (s) => <code>{s.url}</code> },
        { label: "Transport", cell: (s) => TRANSPORT_LABELS[s.transport] },
        { label: "Credential", cell: (s) => credentialSummary(s.credential) },
        {
          label: "State",
          cell: (s) => (
            <>
              {s.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="muted">disabled</Badge>}
              {s.skip_tls_verification ? (
                <>
                  {" "}
                  <Badge tone="bad">TLS not verified</Badge>
                </>
              ) : null}
            </>
          ),
        },
        {
          label: "Price per call",
          cell: (s) => (s.price_per_call > 0 ? formatUsd(s.price_per_call) : "free"),
        },
      ]}
      form={(existing, done, cancel) => <McpServerForm existing={existing} onDone={done} onCancel={cancel} />}
    />
  );
}

/** Create or edit a server. The credential's value is write-only: blank on edit keeps the stored one. */
function McpServerForm(props: { existing: McpServer | undefined; onDone: () => void; onCancel: () => void }) {
  const { api } = useSession();
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [description, setDescription] = useState(e?.description ?? "");
  const [url, setUrl] = useState(e?.url ?? "");
  const [transport, setTransport] = useState<McpTransport>(e?.transport ?? "streamable_http");
  const [credential, setCredential] = useState(() => credentialDraft(e?.credential));
  const [enabled, setEnabled] = useState(e?.enabled ?? true);
  const [skipTls, setSkipTls] = useState(e?.skip_tls_verification ?? false);
  const [price, setPrice] = useState(String(e?.price_per_call ?? 0));
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const setCredentialPart = (patch: Partial<CredentialDraft>) => setCredential({ ...credential, ...patch });
  const storedHeader = e?.credential.kind === "header" ? e.credential.header_name : undefined;

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    const sent = credentialBody(credential, e?.credential);
    if (sent.error !== undefined) {
      const secret = credential.kind === "oauth_client_credentials" ? "client_secret" : "value";
      found[`credential.${secret}`] = sent.error;
    }
    const pricePerCall = parseNumberField(price);
    if (Number.isNaN(pricePerCall)) found.price_per_call = "enter a price in USD (0 for none)";
    if (!errors.submitted(found)) return;
    const body: McpServerBody = {
      name,
      description,
      url,
      transport,
      enabled,
      skip_tls_verification: skipTls,
      price_per_call: pricePerCall,
      // Left out on edit when the stored credential is kept: its value cannot be read back.
      ...(sent.credential ? { credential: sent.credential } : {}),
    };
    void submit.run(async () => {
      if (e) await api.mcpServers.update(e.id, body);
      else await api.mcpServers.create(body);
      props.onDone();
    });
  };

  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={e ? `Edit MCP server ${e.name}` : "New MCP server"}
      noValidate
    >
      <h2>{e ? `Edit ${e.name}` : "New MCP server"}</h2>
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <div className="grid-2">
        <Field
          label="Name"
          hint="Lower-case letters and digits, words joined by single hyphens: agents see its tools as name__tool."
          {...errors.field("name")}
        >
          {(c) => <input {...c} value={name} onChange={(ev) => setName(ev.target.value)} />}
        </Field>
        <Field label="Description" {...errors.field("description")}>
          {(c) => <input {...c} value={description} onChange={(ev) => setDescription(ev.target.value)} />}
        </Field>
        <Field label="URL" hint="The server's MCP endpoint, http or https." {...errors.field("url")}>
          {(c) => (
            <input
              {...c}
              type="url"
              value={url}
              placeholder="https://mcp.example.com/mcp"
              onChange={(ev) => setUrl(ev.target.value)}
            />
          )}
        </Field>
        <Field label="Transport" {...errors.field("transport")}>
          {(c) => (
            <select
              {...c}
              value={transport}
              onChange={(ev) => setTransport(McpTransport.parse(ev.target.value))}
            >
              {McpTransport.options.map((option) => (
                <option key={option} value={option}>
                  {TRANSPORT_LABELS[option]}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Credential</legend>
        <div className="grid-3">
          <Field label="Credential kind" {...errors.field("credential.kind")}>
            {(c) => (
              <select
                {...c}
                value={credential.kind}
                onChange={(ev) => setCredentialPart({ kind: credentialKindOf(ev.target.value) })}
              >
                <option value="none">None</option>
                <option value="header">A header sent with every request</option>
                <option value="per_user">A header each member sets for themselves</option>
                <option value="oauth_client_credentials">
                  OAuth client credentials (tokens minted by the gateway)
                </option>
              </select>
            )}
          </Field>
          {credential.kind === "header" || credential.kind === "per_user" ? (
            <Field
              label="Header name"
              hint={
                credential.kind === "per_user"
                  ? "Members set their own value on the Agent config page; the server sees each caller's own."
                  : undefined
              }
              {...errors.field("credential.header_name")}
            >
              {(c) => (
                <input
                  {...c}
                  value={credential.header_name}
                  onChange={(ev) => setCredentialPart({ header_name: ev.target.value })}
                />
              )}
            </Field>
          ) : null}
          {credential.kind === "oauth_client_credentials" ? (
            <OAuthClientFields
              draft={credential}
              stored={e?.credential.kind === "oauth_client_credentials"}
              set={setCredentialPart}
              error={(path) => errors.field(`credential.${path}`)}
            />
          ) : null}
          {credential.kind === "header" ? (
            <>
              <Field
                label="Header value"
                hint={
                  storedHeader
                    ? `Write-only: leave empty to keep the value stored for ${storedHeader}.`
                    : "Write-only: sealed when stored, never shown again. E.g. Bearer …"
                }
                {...errors.field("credential.value")}
              >
                {(c) => (
                  <input
                    {...c}
                    type="password"
                    autoComplete="new-password"
                    value={credential.value}
                    placeholder={storedHeader ? "•••••• (stored)" : ""}
                    onChange={(ev) => setCredentialPart({ value: ev.target.value })}
                  />
                )}
              </Field>
            </>
          ) : null}
        </div>
      </fieldset>
      <Field
        label="Price per call (USD)"
        hint={`Counted toward the caller's USD caps for each tool call; 0 to ${MAX_PRICE_PER_CALL_USD}.`}
        {...errors.field("price_per_call")}
      >
        {(c) => (
          <input
            {...c}
            type="number"
            min={0}
            max={MAX_PRICE_PER_CALL_USD}
            step="any"
            value={price}
            onChange={(ev) => setPrice(ev.target.value)}
          />
        )}
      </Field>
      <Check
        label="Enabled"
        name="enabled"
        hint="a disabled server is granted to nobody"
        checked={enabled}
        onChange={setEnabled}
      />
      <Check
        label="Skip TLS verification"
        name="skip_tls_verification"
        checked={skipTls}
        onChange={setSkipTls}
      />
      <FormActions busy={submit.busy} noun="MCP server" editing={e !== undefined} onCancel={props.onCancel} />
    </form>
  );
}

/** An OAuth client's fields: token URL, client id, scopes, and the write-only client secret. */
function OAuthClientFields(props: {
  draft: CredentialDraft;
  /** The server stores a client already: an empty secret keeps it (unless another field changed). */
  stored: boolean;
  set: (patch: Partial<CredentialDraft>) => void;
  error: (path: string) => ReturnType<ReturnType<typeof useFieldErrors>["field"]>;
}) {
  const { draft, set } = props;
  const text = (label: string, path: "token_url" | "client_id" | "scope", hint?: string) => (
    <Field label={label} hint={hint} {...props.error(path)}>
      {(c) => <input {...c} value={draft[path]} onChange={(ev) => set({ [path]: ev.target.value })} />}
    </Field>
  );
  return (
    <>
      {text(
        "Token URL",
        "token_url",
        "Where the gateway posts the client credentials grant, e.g. https://auth.example.com/oauth/token",
      )}
      {text("Client ID", "client_id")}
      {text("Scope", "scope", "Optional: space-separated scopes to ask for.")}
      <Field
        label="Client secret"
        hint={
          props.stored
            ? "Write-only: leave empty to keep the stored secret (then the fields above cannot change)."
            : "Write-only: sealed when stored, never shown again."
        }
        {...props.error("client_secret")}
      >
        {(c) => (
          <input
            {...c}
            type="password"
            autoComplete="new-password"
            value={draft.value}
            placeholder={props.stored ? "•••••• (stored)" : ""}
            onChange={(ev) => set({ value: ev.target.value })}
          />
        )}
      </Field>
    </>
  );
}
