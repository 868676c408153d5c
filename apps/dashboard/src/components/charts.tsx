import type { AccessLogEntry } from "@agentnet/contracts";
import type { Query } from "../api/client";
import type { Api } from "../api/endpoints";
import { MAX_PAGE_SIZE } from "../domain/filters";
import { formatShare, formatTokens, formatUsd } from "../domain/format";
import type { RangeBounds } from "../domain/time-range";
import { dimensionsOf, sumBuckets } from "../domain/usage";
import { useLoad } from "../hooks";
import { type Session, useSession } from "../session";
import { LoadState } from "./ui";

/** One line of a spend table: what one model, provider, user or group used in the range. */
interface SpendRow {
  key: string;
  label: string;
  requests: number;
  tokens: number;
  cost: number;
}

/** Most expensive first; equal costs by tokens, then requests. */
const byCost = (a: SpendRow, b: SpendRow): number =>
  b.cost - a.cost || b.tokens - a.tokens || b.requests - a.requests;

/** Spend per row with a bar for each row's share of the cost (of the tokens when nothing was priced). */
function SpendTable(props: { title: string; rows: SpendRow[]; empty: string }) {
  const totalCost = props.rows.reduce((sum, r) => sum + r.cost, 0);
  const totalTokens = props.rows.reduce((sum, r) => sum + r.tokens, 0);
  const share = (row: SpendRow) =>
    totalCost > 0 ? row.cost / totalCost : totalTokens > 0 ? row.tokens / totalTokens : 0;
  return (
    <table className="split">
      <caption>{props.title}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">{totalCost > 0 ? "Share of cost" : "Share of tokens"}</th>
          <th scope="col" className="num">
            Requests
          </th>
          <th scope="col" className="num">
            Tokens
          </th>
          <th scope="col" className="num">
            Cost
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 ? (
          <tr>
            <td colSpan={5}>{props.empty}</td>
          </tr>
        ) : null}
        {props.rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.label}</th>
            <td>
              <span className="split-share">
                <span className="split-track">
                  <span className="split-fill" style={{ width: `${share(row) * 100}%` }} />
                </span>
                {formatShare(share(row))}
              </span>
            </td>
            <td className="num">{formatTokens(row.requests)}</td>
            <td className="num">{formatTokens(row.tokens)}</td>
            <td className="num">{formatUsd(row.cost)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Spend by model, provider and, for account-wide readers, by user and group, in the range. The
 * candidates come from the newest logged requests (`sample`) and the account's providers, users
 * and groups; the API sums each one.
 */
export function SpendTables(props: { bounds: RangeBounds; sample: AccessLogEntry[] }) {
  const session = useSession();
  const spend = useLoad(() => loadSpend(session, props.bounds, props.sample), [props.sample]);
  return (
    <>
      <h2>Spend by dimension</h2>
      <LoadState loading={spend.loading && !spend.data} error={spend.error} what="the spend tables" />
      {spend.data ? (
        <div className="spend-grid">
          {spend.data.map((table) => (
            <div className="card" key={table.title}>
              <SpendTable title={table.title} rows={table.rows} empty={table.empty} />
            </div>
          ))}
        </div>
      ) : null}
      <p className="hint">
        Requests are logged requests (with log collection on in Gateway settings). Models and providers are
        those of the newest {MAX_PAGE_SIZE} logged requests in the range and of the connected providers; a
        request counts for every group of its caller.
      </p>
    </>
  );
}

interface SpendTableData {
  title: string;
  rows: SpendRow[];
  empty: string;
}

type SpendFilter = "model" | "provider_id" | "user_id" | "group_id";

/**
 * For each candidate, the usage overview and the access-log count filtered to it, so the API does
 * the sums. The API has no group-by: two reads per row, a few at a time.
 */
async function loadSpend(session: Session, bounds: RangeBounds, sample: AccessLogEntry[]) {
  const { api } = session;
  const [providers, groups] = await Promise.all([
    session.accountWide ? api.providers.list() : Promise.resolve([]),
    session.accountWide ? api.groups() : Promise.resolve([]),
  ]);
  const seen = dimensionsOf(sample);
  const providerNames = new Map([
    ...seen.providers,
    ...providers.map((p): [string, string] => [p.id, p.name]),
  ]);
  const models = new Set([...seen.models, ...providers.flatMap((p) => p.models.map((m) => m.id))]);
  const tables: { title: string; filter: SpendFilter; empty: string; candidates: [string, string][] }[] = [
    {
      title: "By model",
      filter: "model",
      empty: "No model used in this range.",
      candidates: [...models].map((m) => [m, m]),
    },
    {
      title: "By provider",
      filter: "provider_id",
      empty: "No provider served this range.",
      candidates: [...providerNames],
    },
  ];
  if (session.accountWide) {
    tables.push(
      {
        title: "By user",
        filter: "user_id",
        empty: "No user sent requests in this range.",
        candidates: session.users.map((u) => [u.id, u.name || u.email]),
      },
      {
        title: "By group",
        filter: "group_id",
        empty: "No group used the gateway in this range.",
        candidates: groups.map((g) => [g.id, g.name]),
      },
    );
  }
  const jobs = tables.flatMap((table, index) =>
    table.candidates.map(([key, label]) => ({ index, key, label, filter: table.filter })),
  );
  const rows = await mapBounded(jobs, PARALLEL_READS, async (job) => ({
    index: job.index,
    row: await spendOf(api, bounds, { [job.filter]: job.key }, job.key, job.label),
  }));
  return tables.map(
    (table, index): SpendTableData => ({
      title: table.title,
      empty: table.empty,
      rows: rows
        .filter((r) => r.index === index && (r.row.requests > 0 || r.row.tokens > 0 || r.row.cost > 0))
        .map((r) => r.row)
        .sort(byCost),
    }),
  );
}

const PARALLEL_READS = 6;

async function spendOf(
  api: Api,
  bounds: RangeBounds,
  filter: Query,
  key: string,
  label: string,
): Promise<SpendRow> {
  // Month buckets: the fewest rows for any range; their sum is the range's total.
  const [buckets, logs] = await Promise.all([
    api.usage({ ...bounds, granularity: "month", ...filter }),
    api.accessLogs({ ...bounds, page_size: 1, ...filter }),
  ]);
  const totals = sumBuckets(buckets);
  return { key, label, requests: logs.total_records, tokens: totals.total_tokens, cost: totals.cost_usd };
}

/** `work` on every item, at most `limit` at a time; results in the items' order. */
async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  const queue = items.entries();
  const worker = async () => {
    for (const [index, item] of queue) results[index] = await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
