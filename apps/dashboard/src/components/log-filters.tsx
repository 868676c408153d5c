import type { Group, Policy, Provider } from "@agentnet/contracts";
import { type FormEvent, useEffect, useState } from "react";
import {
  DEFAULT_FILTERS,
  filtersToParams,
  filtersToQuery,
  type LogFilters,
  parseFilters,
  splitList,
} from "../domain/filters";
import { useLoad } from "../hooks";
import { type Location, navigate } from "../router";
import { useSession } from "../session";
import { DateTimeField, Field } from "./ui";

/**
 * A list whose filters live in the address bar (so a view can be shared): parsed from it, applied
 * by navigating to `path` with new ones, and loaded again whenever they change (other parameters,
 * such as an open entry, do not reload it).
 */
export function useFilteredList<T>(
  location: Location,
  path: string,
  load: (query: ReturnType<typeof filtersToQuery>) => Promise<T>,
) {
  const filters = parseFilters(location.params);
  const query = filtersToParams(filters).toString();
  const apply = (next: LogFilters) => navigate(path, filtersToParams(next));
  const loaded = useLoad(() => load(filtersToQuery(filters)), [query]);
  return { query, filters, apply, loaded };
}

/** Configuration that names the ids of log rows. */
export interface LogLookups {
  groups: Group[];
  providers: Provider[];
  policies: Policy[];
}

const NO_LOOKUPS: LogLookups = { groups: [], providers: [], policies: [] };

/**
 * The groups, providers and policies that name a log row's ids, read once, or `given` when the page
 * read them already. Only callers with the account-wide grant may read configuration: for anyone
 * else, and for a read that is refused, the ids stay ids.
 */
export function useLogLookups(given?: LogLookups): LogLookups {
  const { api, accountWide } = useSession();
  const loaded = useLoad(async (): Promise<LogLookups> => {
    if (given || !accountWide) return NO_LOOKUPS;
    const [groups, providers, policies] = await Promise.all([
      api.groups().catch((): Group[] => []),
      api.providers.list().catch((): Provider[] => []),
      api.policies.list().catch((): Policy[] => []),
    ]);
    return { groups, providers, policies };
  }, [given, accountWide]);
  return given ?? loaded.data ?? NO_LOOKUPS;
}

const selected = (select: HTMLSelectElement) => [...select.selectedOptions].map((o) => o.value);

/**
 * Every filter of the spec's log reads. Edits are a draft until "Apply", so typing does not reload
 * the table; applying writes them to the URL. User and group filters only show for callers with
 * the account-wide grant (the API overrides them for everyone else).
 */
export function LogFilterBar(props: {
  filters: LogFilters;
  onApply: (filters: LogFilters) => void;
  lookups?: LogLookups;
}) {
  const { accountWide, users } = useSession();
  const [draft, setDraft] = useState(props.filters);
  const [models, setModels] = useState(props.filters.model.join(", "));
  useEffect(() => {
    setDraft(props.filters);
    setModels(props.filters.model.join(", "));
  }, [props.filters]);
  const lookups = useLogLookups(props.lookups);
  const put = <K extends keyof LogFilters>(key: K, value: LogFilters[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply({ ...draft, model: splitList(models), page: 1 });
  };
  const clear = () => props.onApply({ ...DEFAULT_FILTERS, page_size: props.filters.page_size });
  return (
    <form className="filters card" onSubmit={submit} aria-label="Filters">
      <Field label="Search" hint="Log id, host, path, model, user email or name">
        {(c) => (
          <input {...c} type="search" value={draft.search} onChange={(e) => put("search", e.target.value)} />
        )}
      </Field>
      {accountWide ? (
        <Field label="User">
          {(c) => (
            <select {...c} value={draft.user_id} onChange={(e) => put("user_id", e.target.value)}>
              <option value="">Anyone</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name || u.email}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field label="Session id">
        {(c) => <input {...c} value={draft.session_id} onChange={(e) => put("session_id", e.target.value)} />}
      </Field>
      {accountWide ? (
        <Field label="Groups" hint="Matches any selected">
          {(c) => (
            <select
              {...c}
              multiple
              size={3}
              value={draft.group_id}
              onChange={(e) => put("group_id", selected(e.target))}
            >
              {lookups.groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      {accountWide ? (
        <Field label="Providers" hint="Matches any selected">
          {(c) => (
            <select
              {...c}
              multiple
              size={3}
              value={draft.provider_id}
              onChange={(e) => put("provider_id", selected(e.target))}
            >
              {lookups.providers.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field label="Models" hint="Comma-separated, matches any">
        {(c) => <input {...c} value={models} onChange={(e) => setModels(e.target.value)} />}
      </Field>
      <Field label="Decision">
        {(c) => (
          <select {...c} value={draft.decision} onChange={(e) => put("decision", e.target.value)}>
            <option value="">Any</option>
            <option value="allow">Allowed</option>
            <option value="deny">Denied</option>
          </select>
        )}
      </Field>
      <Field label="Path prefix">
        {(c) => (
          <input {...c} placeholder="/v1/" value={draft.path} onChange={(e) => put("path", e.target.value)} />
        )}
      </Field>
      <DateTimeField label="From" iso={draft.start_date} onChange={(iso) => put("start_date", iso)} />
      <DateTimeField label="To" iso={draft.end_date} onChange={(iso) => put("end_date", iso)} />
      <div className="filter-actions">
        <button type="submit">Apply filters</button>
        <button type="button" className="ghost" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** Previous/next paging with the page size. */
export function Pager(props: {
  page: { page: number; total_pages: number; total_records: number };
  unit: string;
  filters: LogFilters;
  onApply: (next: LogFilters) => void;
}) {
  const { page, total_pages: totalPages, total_records: totalRecords } = props.page;
  const onPage = (next: number) => props.onApply({ ...props.filters, page: next });
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="ghost" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span aria-live="polite">
        Page {page} of {Math.max(1, totalPages)} · {totalRecords} {props.unit}
      </span>
      <button type="button" className="ghost" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        Next
      </button>
      <label>
        Per page{" "}
        <select
          value={props.filters.page_size}
          onChange={(e) => props.onApply({ ...props.filters, page_size: Number(e.target.value), page: 1 })}
        >
          {[10, 25, 50, 100].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
