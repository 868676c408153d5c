import type { CatalogProvider, Provider } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import type { ProviderBody } from "../../api/endpoints";
import { useFieldErrors } from "../../components/field-errors";
import { Check, Field, FormError, Progress } from "../../components/ui";
import { betasText, catalogBetasHint, parseBetas, servesClaudeBetas } from "../../domain/anthropic-betas";
import { keyFieldText, shortLivedKeyWarning } from "../../domain/credential-kinds";
import { useSubmit } from "../../hooks";
import { useSession } from "../../session";
import { type ModelRow, ModelRows, rowFromDiscovered, rowFromModel, rowsToModels } from "./provider-models";

const defaultUpstream = (entry: CatalogProvider) =>
  entry.default_host ? `https://${entry.default_host}` : "";

/** Create or edit a provider. The key is write-only: never shown, blank on edit keeps the stored one. */
export function ProviderForm(props: {
  entry: CatalogProvider;
  existing?: Provider | undefined;
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api } = useSession();
  const { entry, existing } = props;
  const [name, setName] = useState(existing?.name ?? entry.name);
  const [upstream, setUpstream] = useState(existing?.upstream_url ?? defaultUpstream(entry));
  const [apiKey, setApiKey] = useState("");
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [skipTls, setSkipTls] = useState(existing?.skip_tls_verification ?? false);
  const [metadataDisabled, setMetadataDisabled] = useState(existing?.metadata_disabled ?? false);
  const [userHeader, setUserHeader] = useState(existing?.identity_header_user_id ?? "");
  const [groupsHeader, setGroupsHeader] = useState(existing?.identity_header_groups ?? "");
  const [extra, setExtra] = useState<Record<string, string>>(existing?.extra_values ?? {});
  const [rows, setRows] = useState<ModelRow[]>((existing?.models ?? []).map(rowFromModel));
  const claude = servesClaudeBetas(entry);
  const [betas, setBetas] = useState(betasText(existing?.anthropic_betas));
  const save = useSubmit();
  const errors = useFieldErrors(save.error);
  const keyText = keyFieldText(entry.id);
  const shortLived = shortLivedKeyWarning(entry.id, apiKey, existing?.credential_kind);
  const discover = useSubmit();
  const [discovered, setDiscovered] = useState<string | undefined>();
  // Adding, removing or replacing rows moves the rows the errors point at by index.
  const replaceRows = (next: ModelRow[]) => {
    setRows(next);
    errors.edit("models");
  };

  const runDiscovery = () => {
    setDiscovered(undefined);
    void discover.run(async () => {
      const body =
        apiKey !== ""
          ? { catalog_provider_id: entry.id, upstream_url: upstream, api_key: apiKey }
          : existing
            ? { catalog_provider_id: entry.id, upstream_url: upstream, provider_id: existing.id }
            : { catalog_provider_id: entry.id, upstream_url: upstream };
      const reply = await api.discoverModels(body);
      replaceRows(reply.models.map(rowFromDiscovered));
      const unpriced = reply.models.filter((m) => !m.pricing_known).length;
      setDiscovered(`${reply.models.length} models found${unpriced ? `; ${unpriced} need a price` : ""}.`);
    });
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const { models, errors: found } = rowsToModels(rows);
    if (!existing && apiKey === "") found.api_key = keyText.missing;
    const parsedBetas = parseBetas(betas);
    if (claude && parsedBetas.error !== undefined) found.anthropic_betas = parsedBetas.error;
    if (!errors.submitted(found)) return;
    const body: ProviderBody = {
      provider_id: entry.id,
      name,
      upstream_url: upstream,
      models,
      extra_values: extra,
      identity_header_user_id: userHeader,
      identity_header_groups: groupsHeader,
      enabled,
      skip_tls_verification: skipTls,
      metadata_disabled: metadataDisabled,
      ...(apiKey !== "" ? { api_key: apiKey } : {}),
      // Left empty, the catalog's list applies (null also clears a stored one).
      ...(claude ? { anthropic_betas: parsedBetas.betas ?? null } : {}),
    };
    void save.run(async () => {
      if (existing) await api.providers.update(existing.id, body);
      else await api.providers.create(body);
      props.onDone();
    });
  };

  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={existing ? `Edit provider ${existing.name}` : `New ${entry.name} provider`}
      style={{ borderLeftColor: entry.brand_color }}
    >
      <h2>{existing ? `Edit ${existing.name}` : `New ${entry.name} provider`}</h2>
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <Field label="Name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(e) => setName(e.target.value)} required />}
      </Field>
      <Field
        label="Upstream URL"
        hint="Where traffic is forwarded, with scheme"
        {...errors.field("upstream_url")}
      >
        {(c) => (
          <input {...c} type="url" value={upstream} onChange={(e) => setUpstream(e.target.value)} required />
        )}
      </Field>
      <Field
        label={keyText.label}
        hint={
          <>
            {keyText.accepts}{" "}
            {existing
              ? "Write-only. Leave blank to keep the stored key."
              : "Write-only: sealed at rest and never shown again."}
            {shortLived ? (
              <>
                {" "}
                <strong role="note">{shortLived}</strong>
              </>
            ) : null}
          </>
        }
        {...errors.field("api_key")}
      >
        {(c) => (
          <input
            {...c}
            type="password"
            autoComplete="new-password"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            placeholder={existing ? "•••••• (stored)" : ""}
          />
        )}
      </Field>
      {entry.extra_headers.map((h) => (
        <Field
          key={h.name}
          label={`Header ${h.name}${h.required ? " (required)" : ""}`}
          hint={h.description}
          {...errors.field(`extra_values.${h.name}`)}
        >
          {(c) => (
            <input
              {...c}
              value={extra[h.name] ?? ""}
              placeholder={h.default_value ?? ""}
              onChange={(e) => setExtra({ ...extra, [h.name]: e.target.value })}
            />
          )}
        </Field>
      ))}
      {claude ? (
        <Field
          label="Claude betas let through"
          hint={`The anthropic-beta values this upstream accepts; others are left out of each request. Comma-separated. ${catalogBetasHint(entry)}`}
          {...errors.field("anthropic_betas")}
        >
          {(c) => (
            <textarea
              {...c}
              rows={2}
              value={betas}
              placeholder={betasText(entry.anthropic_betas)}
              onChange={(e) => setBetas(e.target.value)}
            />
          )}
        </Field>
      ) : null}
      <Check label="Enabled" name="enabled" checked={enabled} onChange={setEnabled} />
      <Check
        label="Skip TLS verification"
        name="skip_tls_verification"
        hint="stored without a vendor check"
        checked={skipTls}
        onChange={setSkipTls}
      />
      <Check
        label="Do not inject user and group metadata"
        name="metadata_disabled"
        checked={metadataDisabled}
        onChange={setMetadataDisabled}
      />
      <div className="grid-2">
        <Field
          label="Identity header for the user"
          hint="Empty disables it"
          {...errors.field("identity_header_user_id")}
        >
          {(c) => <input {...c} value={userHeader} onChange={(e) => setUserHeader(e.target.value)} />}
        </Field>
        <Field
          label="Identity header for groups"
          hint="Empty disables it"
          {...errors.field("identity_header_groups")}
        >
          {(c) => <input {...c} value={groupsHeader} onChange={(e) => setGroupsHeader(e.target.value)} />}
        </Field>
      </div>
      <div className="discover">
        <button
          type="button"
          className="secondary"
          onClick={runDiscovery}
          disabled={discover.busy || (!existing && apiKey === "")}
        >
          Discover models
        </button>
        <span className="hint">
          {entry.listing
            ? "Asks the vendor which models the key can use and fills in the prices."
            : "This provider has no model listing; add rows by hand."}
        </span>
        {discover.busy ? <Progress label="Asking the vendor for its models…" /> : null}
        {discovered ? (
          <p role="status" className="ok">
            {discovered}
          </p>
        ) : null}
        <FormError error={discover.error} />
      </div>
      <ModelRows
        rows={rows}
        onChange={setRows}
        onReplace={replaceRows}
        error={errors.error}
        disabled={false}
      />
      {save.busy ? <Progress label="Checking the credential with the vendor and saving…" /> : null}
      <div className="actions">
        <button type="submit" disabled={save.busy}>
          {existing ? "Save provider" : "Add provider"}
        </button>
        <button type="button" className="ghost" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
