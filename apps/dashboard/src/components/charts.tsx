import type { UsageBreakdownDimension } from "@agentnet/contracts";
import { formatShare, formatTokens, formatUsd } from "../domain/format";
import type { RangeBounds } from "../domain/time-range";
import { type SpendRow, spendRows } from "../domain/usage";
import { useLoad } from "../hooks";
import { type Session, useSession } from "../session";
import { LoadState } from "./ui";

/** The range's cost and tokens, what each row's share is of. */
export interface SpendTotal {
  cost: number;
  tokens: number;
}

/**
 * Spend per row with a bar for each row's share of the range's cost (of its tokens when nothing
 * was priced). Shares are of the range, not of the rows: group rows overlap (a request counts in
 * each of its groups) and a cut table lacks rows. The total is read apart from the rows, so a
 * request that arrived in between is capped at a whole share.
 */
function SpendTable(props: { title: string; rows: SpendRow[]; empty: string; total: SpendTotal }) {
  const { cost: totalCost, tokens: totalTokens } = props.total;
  const share = (row: SpendRow) =>
    Math.min(1, totalCost > 0 ? row.cost / totalCost : totalTokens > 0 ? row.tokens / totalTokens : 0);
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
 * Spend by model and, for account-wide readers, by provider, user and group in the range: one
 * breakdown read per table, named with the account's providers, users and groups.
 */
export function SpendTables(props: { bounds: RangeBounds; total: SpendTotal }) {
  const session = useSession();
  const spend = useLoad(
    () => loadSpend(session, props.bounds),
    [props.bounds.start_date, props.bounds.end_date],
  );
  return (
    <>
      <h2>Spend by dimension</h2>
      <LoadState loading={spend.loading && !spend.data} error={spend.error} what="the spend tables" />
      {spend.data ? (
        <div className="spend-grid">
          {spend.data.map((table) => (
            <div className="card" key={table.title}>
              <SpendTable title={table.title} rows={table.rows} empty={table.empty} total={props.total} />
              {table.truncated ? (
                <p className="hint">Only the {table.rows.length} most expensive are listed.</p>
              ) : null}
            </div>
          ))}
        </div>
      ) : null}
      <p className="hint">
        Requests count every request, logged or not, denied ones included. A request counts for every group
        its caller was in.
      </p>
    </>
  );
}

interface SpendTableData {
  title: string;
  rows: SpendRow[];
  empty: string;
  truncated: boolean;
}

const TABLES: { by: UsageBreakdownDimension; title: string; empty: string; accountWideOnly: boolean }[] = [
  { by: "model", title: "By model", empty: "No model used in this range.", accountWideOnly: false },
  // Provider names come from the provider list, which only account-wide readers may read.
  { by: "provider", title: "By provider", empty: "No provider served this range.", accountWideOnly: true },
  { by: "user", title: "By user", empty: "No user sent requests in this range.", accountWideOnly: true },
  {
    by: "group",
    title: "By group",
    empty: "No group used the gateway in this range.",
    accountWideOnly: true,
  },
];

async function loadSpend(session: Session, bounds: RangeBounds): Promise<SpendTableData[]> {
  const { api, accountWide } = session;
  const tables = TABLES.filter((table) => accountWide || !table.accountWideOnly);
  const [breakdowns, providers, groups] = await Promise.all([
    Promise.all(tables.map((table) => api.usageBreakdown({ ...bounds, by: table.by }))),
    accountWide ? api.providers.list() : Promise.resolve([]),
    accountWide ? api.groups() : Promise.resolve([]),
  ]);
  const names: Record<UsageBreakdownDimension, Map<string, string>> = {
    model: new Map(),
    provider: new Map(providers.map((p) => [p.id, p.name])),
    user: new Map(session.users.map((u) => [u.id, u.name || u.email])),
    group: new Map(groups.map((g) => [g.id, g.name])),
  };
  return tables.map((table, index) => {
    const breakdown = breakdowns[index] ?? { data: [], truncated: false };
    return {
      title: table.title,
      empty: table.empty,
      rows: spendRows(table.by, breakdown.data, names[table.by]),
      truncated: breakdown.truncated,
    };
  });
}
