import type { UsageBucket } from "@agentnet/contracts";
import { formatTokens, formatUsd } from "../domain/format";

const W = 800;
const H = 220;
const PAD = { left: 64, right: 12, top: 12, bottom: 36 };

const bucketLabel = (iso: string, granularity: string): string => {
  const d = new Date(iso);
  if (granularity === "minute" || granularity === "hour")
    return d.toLocaleString("en-GB", { day: "2-digit", month: "short", hour: "2-digit", minute: "2-digit" });
  if (granularity === "month") return d.toLocaleString("en-GB", { month: "short", year: "numeric" });
  return d.toLocaleDateString("en-GB", { day: "2-digit", month: "short" });
};

/** Tokens per bucket as bars (input and output stacked); the cost is in each bar's tooltip. */
export function UsageChart(props: { buckets: UsageBucket[]; granularity: string }) {
  const max = Math.max(1, ...props.buckets.map((b) => b.total_tokens));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, props.buckets.length);
  const barW = Math.max(2, Math.min(48, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const labelEvery = Math.ceil(props.buckets.length / 8);
  return (
    <svg
      className="chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`Tokens per ${props.granularity}: ${props.buckets.length} buckets, peak ${formatTokens(max)} tokens`}
    >
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(max * f)} y2={y(max * f)} className="grid" />
          <text x={PAD.left - 6} y={y(max * f) + 4} textAnchor="end" className="axis">
            {formatTokens(Math.round(max * f))}
          </text>
        </g>
      ))}
      {props.buckets.map((b, i) => {
        const x = PAD.left + i * slot + (slot - barW) / 2;
        const inputTop = y(b.input_tokens);
        return (
          <g key={b.period_start}>
            <title>
              {`${bucketLabel(b.period_start, props.granularity)}: ${formatTokens(b.total_tokens)} tokens (${formatTokens(b.input_tokens)} in, ${formatTokens(b.output_tokens)} out), ${formatUsd(b.cost_usd)}`}
            </title>
            <rect x={x} y={inputTop} width={barW} height={PAD.top + plotH - inputTop} className="bar-input" />
            <rect
              x={x}
              y={y(b.input_tokens + b.output_tokens)}
              width={barW}
              height={inputTop - y(b.input_tokens + b.output_tokens)}
              className="bar-output"
            />
            {i % labelEvery === 0 ? (
              <text x={x + barW / 2} y={H - 14} textAnchor="middle" className="axis">
                {bucketLabel(b.period_start, props.granularity)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}

export interface SplitRow {
  key: string;
  label: string;
  color?: string | undefined;
  tokens: number;
  cost: number;
}

/** Horizontal bars: each row's share of the tokens, with its cost. */
export function SplitBars(props: { title: string; rows: SplitRow[] }) {
  const total = Math.max(
    1,
    props.rows.reduce((sum, r) => sum + r.tokens, 0),
  );
  return (
    <table className="split">
      <caption>{props.title}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Share of tokens</th>
          <th scope="col" className="num">
            Tokens
          </th>
          <th scope="col" className="num">
            Cost
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.label}</th>
            <td>
              <span className="split-track">
                <span
                  className="split-fill"
                  style={{
                    width: `${(row.tokens / total) * 100}%`,
                    background: row.color ?? "var(--accent)",
                  }}
                />
              </span>
            </td>
            <td className="num">{formatTokens(row.tokens)}</td>
            <td className="num">{formatUsd(row.cost)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
