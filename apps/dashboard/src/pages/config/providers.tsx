import type { CatalogProvider, Provider, ProviderCooldown } from "@agentnet/contracts";
import { useState } from "react";
import { ConfirmDelete, policiesUsing } from "../../components/confirm";
import { Badge, EmptyState, FormError, LoadState, RowActions, ScrollableTable } from "../../components/ui";
import { formatDate, formatDateTime, formatTimeOfDay } from "../../domain/format";
import { priceFreshness, STALE_AFTER_DAYS } from "../../domain/price-freshness";
import { unpricedModels } from "../../domain/unpriced";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";
import { ProviderForm } from "./provider-form";

type Mode =
  | { kind: "list" }
  | { kind: "pick" }
  | { kind: "form"; entry: CatalogProvider; existing?: Provider };

/**
 * A provider a gateway proxy tries last because it kept failing: until when (the full date on
 * hover) and why, under its state.
 */
function CooldownNote({ cooldown }: { cooldown: ProviderCooldown }) {
  return (
    <p className="hint">
      Cooling down until{" "}
      <time dateTime={cooldown.until} title={formatDateTime(cooldown.until)}>
        {formatTimeOfDay(new Date(cooldown.until))}
      </time>{" "}
      — last error: {cooldown.last_error}
    </p>
  );
}

/**
 * When an entry's prices were checked against the vendor's price page, and that page; prices
 * checked more than 60 days ago are flagged stale (a provider's model rows can correct them).
 */
function CatalogPrices(props: { entry: CatalogProvider; now: Date }) {
  const fresh = priceFreshness(props.entry, props.now);
  if (!fresh) return <p className="hint">No prices shipped: set each model's rates on the provider.</p>;
  return (
    <p className="hint">
      Prices checked {formatDate(`${fresh.checkedOn}T12:00:00`)}
      {fresh.source ? (
        <>
          {" "}
          against{" "}
          <a href={fresh.source} target="_blank" rel="noreferrer">
            {props.entry.name}'s price page
          </a>
        </>
      ) : null}
      {fresh.stale ? (
        <>
          {" "}
          <Badge tone="bad">stale: {fresh.ageDays} days old</Badge>
        </>
      ) : null}
    </p>
  );
}

/** The catalog as a grid of vendor buttons in their brand colours, each with its prices' age. */
function CatalogPicker(props: {
  catalog: CatalogProvider[];
  onPick: (entry: CatalogProvider) => void;
  onCancel: () => void;
}) {
  const now = new Date();
  const stale = props.catalog.filter((entry) => priceFreshness(entry, now)?.stale);
  return (
    <div className="card">
      <h2>Pick a provider</h2>
      {stale.length > 0 ? (
        <p className="alert" role="status">
          Catalog prices older than {STALE_AFTER_DAYS} days: {stale.map((entry) => entry.name).join(", ")}.
          Check them against the vendor's price page, and set rates on the provider where they changed.
        </p>
      ) : null}
      <ul className="catalog" aria-label="Provider catalog">
        {props.catalog.map((entry) => (
          <li key={entry.id}>
            <button
              type="button"
              className="catalog-item"
              style={{ borderLeftColor: entry.brand_color }}
              onClick={() => props.onPick(entry)}
            >
              <span className="swatch" style={{ background: entry.brand_color }} aria-hidden="true" />
              <strong>{entry.name}</strong>
              <span className="hint">{entry.description}</span>
            </button>
            <CatalogPrices entry={entry} now={now} />
          </li>
        ))}
      </ul>
      <button type="button" className="ghost" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * Models requested in the last 30 days that have no price: served at $0, or refused where a USD
 * limit applies (`pricing.unknown_model`). Read from the access logs (so only while log
 * collection is on): the cheapest allowed rows first, and the refused ones by reason.
 */
function UnpricedModels(props: { providers: Provider[]; onEdit: (provider: Provider) => void }) {
  const { api, canWrite } = useSession();
  const loaded = useLoad(async () => {
    const since = new Date(Date.now() - 30 * DAY_MS).toISOString();
    const query = { start_date: since, page_size: 100 };
    const [cheapest, refused] = await Promise.all([
      api.accessLogs({ ...query, decision: "allow", sort_by: "cost_usd", sort_order: "ascending" }),
      api.accessLogs({ ...query, decision: "deny", sort_by: "deny_reason", sort_order: "descending" }),
    ]);
    return [...cheapest.data, ...refused.data];
  }, []);
  const models = loaded.data ? unpricedModels(loaded.data, props.providers) : [];
  if (models.length === 0) return null;
  return (
    <section className="card warning" aria-labelledby="unpriced-title">
      <h2 id="unpriced-title">Models seen without a price</h2>
      <p className="hint">
        Requests for these models cost $0, and are refused wherever a USD limit applies. Set their rates on
        the provider (a model row with input and output prices per 1k tokens).
      </p>
      <ScrollableTable
        label="Models seen without a price"
        columns={["Provider", "Model", "Requests (30 days)"]}
        actions
      >
        {models.map((m) => {
          const provider = props.providers.find((p) => p.id === m.providerId);
          return (
            <tr key={`${m.providerId}|${m.model}`}>
              <td>{m.providerName}</td>
              <td>
                <code>{m.model}</code>
              </td>
              <td>{m.requests}</td>
              <td className="row-actions">
                {canWrite && provider ? (
                  <button type="button" className="ghost" onClick={() => props.onEdit(provider)}>
                    Set rates
                  </button>
                ) : null}
              </td>
            </tr>
          );
        })}
      </ScrollableTable>
    </section>
  );
}

export function ProvidersPage() {
  const { api, canWrite } = useSession();
  const loaded = useLoad(
    async () => ({
      providers: await api.providers.list(),
      catalog: await api.catalog(),
      policies: await api.policies.list(),
    }),
    [],
  );
  const [mode, setMode] = useState<Mode>({ kind: "list" });
  const [deleting, setDeleting] = useState<Provider | undefined>();
  const remove = useSubmit();
  const data = loaded.data;
  const entryOf = (p: Provider) => data?.catalog.find((c) => c.id === p.provider_id);
  const done = () => {
    setMode({ kind: "list" });
    loaded.reload();
  };
  return (
    <section aria-labelledby="providers-title">
      <h1 id="providers-title">Providers</h1>
      <p className="lede">Upstream AI providers: an upstream URL, a sealed key and model prices.</p>
      <LoadState loading={loaded.loading && !data} error={loaded.error} what="providers" />
      {data && mode.kind === "pick" ? (
        <CatalogPicker
          catalog={data.catalog}
          onPick={(entry) => setMode({ kind: "form", entry })}
          onCancel={() => setMode({ kind: "list" })}
        />
      ) : null}
      {mode.kind === "form" ? (
        <ProviderForm
          entry={mode.entry}
          existing={mode.existing}
          onDone={done}
          onCancel={() => setMode({ kind: "list" })}
        />
      ) : null}
      {data && mode.kind === "list" ? (
        <>
          {canWrite ? (
            <button type="button" className="page-action" onClick={() => setMode({ kind: "pick" })}>
              Add provider
            </button>
          ) : null}
          <FormError error={remove.error} />
          <UnpricedModels
            providers={data.providers}
            onEdit={(provider) => {
              const entry = entryOf(provider);
              if (entry) setMode({ kind: "form", entry, existing: provider });
            }}
          />
          {data.providers.length === 0 ? (
            <EmptyState title="No providers yet">
              {canWrite
                ? "Add one: pick a vendor from the catalog and paste its API key."
                : "An owner or admin adds providers."}
            </EmptyState>
          ) : (
            <ScrollableTable
              label="Providers"
              columns={["Name", "Catalog", "Upstream", "Models", "State"]}
              actions
            >
              {data.providers.map((p) => {
                const entry = entryOf(p);
                return (
                  <tr key={p.id}>
                    <td>
                      <span
                        className="swatch"
                        style={{ background: entry?.brand_color ?? "#888" }}
                        aria-hidden="true"
                      />{" "}
                      {p.name}
                    </td>
                    <td>{entry?.name ?? p.provider_id}</td>
                    <td>
                      <code>{p.upstream_url}</code>
                    </td>
                    <td>{p.models.length ? p.models.map((m) => m.id).join(", ") : "all catalog models"}</td>
                    <td>
                      {p.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="muted">disabled</Badge>}
                      {p.cooldown ? <CooldownNote cooldown={p.cooldown} /> : null}
                    </td>
                    <RowActions
                      name={p.name}
                      onEdit={
                        canWrite && entry ? () => setMode({ kind: "form", entry, existing: p }) : undefined
                      }
                      onDelete={canWrite ? () => setDeleting(p) : undefined}
                    />
                  </tr>
                );
              })}
            </ScrollableTable>
          )}
        </>
      ) : null}
      {deleting && data ? (
        <ConfirmDelete
          noun="provider"
          name={deleting.name}
          usedBy={policiesUsing(data.policies, (policy) =>
            policy.destination_provider_ids.includes(deleting.id),
          )}
          busy={remove.busy}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() =>
            void remove
              .run(async () => {
                await api.providers.remove(deleting.id);
                loaded.reload();
              })
              .finally(() => setDeleting(undefined))
          }
        />
      ) : null}
    </section>
  );
}
