import type { AuditEntry, AuditVerification } from "@agentnet/contracts";
import { type FormEvent, type KeyboardEvent, useEffect, useId, useState } from "react";
import { saveFile } from "../components/download";
import {
  Badge,
  DateTimeField,
  EmptyState,
  Field,
  FormError,
  LoadState,
  Progress,
  ScrollableTable,
} from "../components/ui";
import {
  AUDIT_OUTCOMES,
  AUDIT_TARGET_TYPES,
  type AuditExportFormat,
  type AuditFilters,
  type AuditView,
  actorLabel,
  auditExportQuery,
  auditListQuery,
  auditViewParams,
  NO_AUDIT_FILTERS,
  outcomeOf,
  parseAuditView,
  targetTypeLabel,
  verificationText,
} from "../domain/audit";
import { formatDateTime } from "../domain/format";
import { useLoad, useSubmit } from "../hooks";
import { type Location, navigate } from "../router";
import { useSession } from "../session";
import { AuditEntryDrawer } from "./audit-drawer";

/**
 * The account's audit trail (owner, admin, auditor): every change made through the API and every
 * refused or failed attempt, newest first, filtered and paged by seq, an entry's details in a
 * drawer, the chain's verification and exports. The whole view is in the URL.
 */
export function AuditPage(props: { location: Location }) {
  const { api } = useSession();
  const view = parseAuditView(props.location.params);
  const listKey = auditViewParams({ ...view, seq: undefined }).toString();
  const list = useLoad(() => api.audit(auditListQuery(view)), [listKey]);
  const page = list.data;

  // Filters and paging are new views (history entries, so Back returns to newer pages); opening
  // an entry only changes how this one is looked at.
  const show = (next: AuditView, replace = false) => navigate("/audit", auditViewParams(next), replace);
  const applyFilters = (filters: AuditFilters) => show({ filters, before_seq: undefined, seq: undefined });
  const openSeq = (seq: number | undefined) => show({ ...view, seq }, true);

  // The open entry is usually on the page; when not (a shared link, a broken link from Verify), it
  // is read by seq.
  const listed = view.seq === undefined ? undefined : page?.entries.find((e) => e.seq === view.seq);
  const lookedUp = useLoad(
    async () => (view.seq !== undefined && !listed ? ((await api.auditEntry(view.seq)) ?? null) : undefined),
    [view.seq, listed === undefined],
  );
  const found = lookedUp.data;
  const open = listed ?? (found && found.seq === view.seq ? found : undefined);
  const missing = view.seq !== undefined && found === null && !lookedUp.loading;

  const onRowKey = (event: KeyboardEvent, entry: AuditEntry) => {
    if (event.target !== event.currentTarget) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openSeq(entry.seq);
    }
  };
  const filtered = Object.values(view.filters).some(Boolean);
  const first = page?.entries[0];
  const last = page?.entries.at(-1);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit trail</h1>
      <p className="lede">
        Every change made through the API, and every attempt at one that was refused or failed, newest first.
        Each entry holds the hash of the one before it: Verify chain finds an entry edited, replaced or
        removed since it was written.
      </p>
      <AuditFilterBar filters={view.filters} onApply={applyFilters} />
      <div className="toolbar audit-toolbar">
        <VerifyChain onOpen={openSeq} />
        <AuditExport filters={view.filters} />
      </div>
      <LoadState loading={list.loading && !page} error={list.error} what="the audit trail" />
      {list.loading && page ? <Progress label="Refreshing…" /> : null}
      <FormError error={lookedUp.error} />
      {missing ? (
        <EmptyState title={`No entry with seq ${view.seq}`}>
          The trail has no such entry.{" "}
          <button type="button" className="ghost" onClick={() => openSeq(undefined)}>
            Dismiss
          </button>
        </EmptyState>
      ) : null}
      {page && page.entries.length === 0 ? (
        <EmptyState title="No entries match">
          {filtered
            ? "Clear or loosen the filters."
            : "Changes made through the API appear here as they are made."}
        </EmptyState>
      ) : null}
      {page && page.entries.length > 0 ? (
        <>
          <ScrollableTable
            label="Audit entries"
            className="audit-table"
            columns={["Time", "Actor", "Action", "Target", "Outcome"]}
          >
            {page.entries.map((e) => (
              <tr
                key={e.id}
                tabIndex={0}
                className="clickable"
                onClick={() => openSeq(e.seq)}
                onKeyDown={(ev) => onRowKey(ev, e)}
                aria-label={`Entry ${e.seq}, ${e.action}, open details`}
              >
                <td>{formatDateTime(e.at)}</td>
                <td>{actorLabel(e.actor)}</td>
                <td>
                  <code className="audit-action">{e.action}</code>
                </td>
                <td>
                  {targetTypeLabel(e.target.type)}
                  {e.target.id ? <span className="audit-sub">{e.target.id}</span> : null}
                </td>
                <td>
                  <Badge tone={outcomeOf(e.outcome).tone}>{outcomeOf(e.outcome).label}</Badge>
                  {e.status !== undefined || e.error_code ? (
                    <span className="audit-sub">{statusText(e)}</span>
                  ) : null}
                </td>
              </tr>
            ))}
          </ScrollableTable>
          <nav className="pager" aria-label="Pages">
            <button
              type="button"
              className="ghost"
              disabled={view.before_seq === undefined}
              onClick={() => show({ ...view, before_seq: undefined, seq: undefined })}
            >
              Newest
            </button>
            <span aria-live="polite">
              Seq {first?.seq} down to {last?.seq}
              {page.next_before_seq === undefined ? " · no older entries" : ""}
            </span>
            <button
              type="button"
              className="ghost"
              disabled={page.next_before_seq === undefined}
              onClick={() => show({ ...view, before_seq: page.next_before_seq, seq: undefined })}
            >
              Older
            </button>
          </nav>
        </>
      ) : null}
      {open ? (
        <AuditEntryDrawer
          key={open.id}
          entry={open}
          onClose={() => openSeq(undefined)}
          onShowTarget={(type, id) => applyFilters({ ...NO_AUDIT_FILTERS, target_type: type, target_id: id })}
        />
      ) : null}
    </section>
  );
}

/** "403 auth.forbidden": the status an attempt was answered with and its error code. */
const statusText = (e: AuditEntry) => [e.status, e.error_code].filter((part) => part !== undefined).join(" ");

/** The list's filters; a draft until "Apply filters", which writes them to the URL. */
function AuditFilterBar(props: { filters: AuditFilters; onApply: (filters: AuditFilters) => void }) {
  const { users } = useSession();
  const [draft, setDraft] = useState(props.filters);
  useEffect(() => setDraft(props.filters), [props.filters]);
  const people = useId();
  const put = (key: keyof AuditFilters, value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply({
      ...draft,
      actor: draft.actor.trim(),
      action: draft.action.trim(),
      target_id: draft.target_id.trim(),
    });
  };
  return (
    <form className="filters card" onSubmit={submit} aria-label="Filters">
      <Field label="Actor" hint="An email or a user id">
        {(c) => (
          <>
            <input {...c} list={people} value={draft.actor} onChange={(e) => put("actor", e.target.value)} />
            <datalist id={people}>
              {users.map((u) => (
                <option key={u.id} value={u.email} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Action" hint="groups.update, or groups for every change to groups">
        {(c) => <input {...c} value={draft.action} onChange={(e) => put("action", e.target.value)} />}
      </Field>
      <Field label="Target type">
        {(c) => (
          <select {...c} value={draft.target_type} onChange={(e) => put("target_type", e.target.value)}>
            <option value="">Any</option>
            {Object.entries(AUDIT_TARGET_TYPES).map(([type, label]) => (
              <option key={type} value={type}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Target id">
        {(c) => <input {...c} value={draft.target_id} onChange={(e) => put("target_id", e.target.value)} />}
      </Field>
      <Field label="Outcome">
        {(c) => (
          <select {...c} value={draft.outcome} onChange={(e) => put("outcome", e.target.value)}>
            <option value="">Any</option>
            {Object.entries(AUDIT_OUTCOMES).map(([outcome, { label }]) => (
              <option key={outcome} value={outcome}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <DateTimeField label="From" iso={draft.from} onChange={(iso) => put("from", iso)} />
      <DateTimeField
        label="Until"
        hint="Entries before this time"
        iso={draft.to}
        onChange={(iso) => put("to", iso)}
      />
      <div className="filter-actions">
        <button type="submit">Apply filters</button>
        <button type="button" className="ghost" onClick={() => props.onApply(NO_AUDIT_FILTERS)}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** Verifies the whole chain (not only the filtered entries) and says what it found. */
function VerifyChain(props: { onOpen: (seq: number) => void }) {
  const { api } = useSession();
  const submit = useSubmit();
  const [result, setResult] = useState<AuditVerification | undefined>();
  const verify = () => {
    setResult(undefined);
    void submit.run(async () => setResult(await api.verifyAudit()));
  };
  const broken = result?.broken;
  return (
    <div className="verify">
      <button type="button" className="secondary" disabled={submit.busy} onClick={verify}>
        Verify chain
      </button>
      {submit.busy ? <Progress label="Verifying the chain…" /> : null}
      {result && !broken ? (
        <p className="ok" role="status">
          {verificationText(result)}
        </p>
      ) : null}
      {result && broken ? (
        <div className="alert" role="alert">
          {verificationText(result)}{" "}
          <button type="button" className="ghost" onClick={() => props.onOpen(broken.seq)}>
            Show entry {broken.seq}
          </button>
        </div>
      ) : null}
      <FormError error={submit.error} />
    </div>
  );
}

/** The whole filtered trail as a file, read with the caller's token and saved from the page. */
function AuditExport(props: { filters: AuditFilters }) {
  const { api } = useSession();
  const submit = useSubmit();
  const [saved, setSaved] = useState<string | undefined>();
  const run = (format: AuditExportFormat) => {
    setSaved(undefined);
    void submit.run(async () => {
      const file = await api.exportAudit(auditExportQuery(props.filters, format));
      saveFile(file.blob, file.name);
      setSaved(file.name);
    });
  };
  return (
    <div className="export">
      <button type="button" className="secondary" disabled={submit.busy} onClick={() => run("jsonl")}>
        Export JSON lines
      </button>
      <button type="button" className="secondary" disabled={submit.busy} onClick={() => run("csv")}>
        Export CSV
      </button>
      {submit.busy ? <Progress label="Exporting…" /> : null}
      {saved ? (
        <p className="hint" role="status">
          Saved {saved}, every entry the filters match.
        </p>
      ) : null}
      <FormError error={submit.error} />
    </div>
  );
}
