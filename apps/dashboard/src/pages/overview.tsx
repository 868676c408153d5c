import type { UsageSeriesBucket } from "@agentnet/contracts";
import { type FormEvent, useMemo, useState } from "react";
import { SpendTables } from "../components/charts";
import { type ChartSeries, TimeChart } from "../components/time-chart";
import { EmptyState, Field, LoadState } from "../components/ui";
import { isoToLocalInput, localInputToIso } from "../domain/filters";
import { formatDuration, formatShare, formatTokens, formatUsd } from "../domain/format";
import {
  checkCustomRange,
  customParams,
  describeRange,
  placeOnTimeAxis,
  presetParams,
  RANGE_PRESETS,
  type RangePreset,
  rangeBounds,
  rangeFromParams,
  type TimeRange,
} from "../domain/time-range";
import { shareOf, succeeded, sumSeries } from "../domain/usage";
import { useLoad } from "../hooks";
import { Link, type Location, navigate } from "../router";
import { useSession } from "../session";

export function OverviewPage(props: { location: Location }) {
  const { api, accountWide } = useSession();
  const query = props.location.params.toString();
  // A preset ends now: now is when its URL was opened, not each render.
  const range = useMemo(() => rangeFromParams(new URLSearchParams(query), new Date()), [query]);
  const bounds = rangeBounds(range);

  const series = useLoad(
    () => api.usageSeries({ ...bounds, granularity: range.granularity }),
    [bounds.start_date, bounds.end_date, range.granularity],
  );
  const axis = useMemo(
    () => (series.data ? placeOnTimeAxis(range, series.data) : undefined),
    [series.data, range],
  );
  const charts = useMemo(() => axis && chartSeries(axis.buckets), [axis]);
  const totals = series.data ? sumSeries(series.data) : undefined;
  const hasUsage = (totals?.requests ?? 0) > 0;
  const per = range.granularity;

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p className="lede">
        {accountWide
          ? "Requests, latency, tokens and cost of the whole account."
          : "Your own requests, latency, tokens and cost."}
      </p>
      <RangePicker range={range} />
      <LoadState loading={series.loading && !series.data} error={series.error} what="usage" />
      {totals ? (
        <dl className="totals">
          <Total label="Requests" testId="total-requests" value={formatTokens(totals.requests)} />
          <Total
            label="Errors"
            testId="error-requests"
            value={countWithShare(totals.errors, totals.requests)}
          />
          <Total
            label="Denied"
            testId="denied-requests"
            value={countWithShare(totals.denied, totals.requests)}
          />
          <Total label="Total tokens" testId="total-tokens" value={formatTokens(totals.total_tokens)} />
          <Total
            label="Input / output tokens"
            value={`${formatTokens(totals.input_tokens)} / ${formatTokens(totals.output_tokens)}`}
          />
          <Total label="Cost" testId="total-cost" value={formatUsd(totals.cost_usd)} />
        </dl>
      ) : null}
      {series.data && !hasUsage ? (
        <EmptyState title="No usage in this range">
          Send a request through the gateway (see <Link to="/agent">Agent config</Link> for the SDK settings),
          or pick a longer range.
        </EmptyState>
      ) : null}
      {axis && charts && hasUsage ? (
        <div className="chart-grid">
          <ChartCard
            title={`Requests per ${per}`}
            times={axis.times}
            domain={axis.domain}
            series={charts.requests}
            stacked
          />
          <ChartCard
            title={`Error and deny rate per ${per}`}
            times={axis.times}
            domain={axis.domain}
            series={charts.rates}
            lines
          />
          <ChartCard
            title={`Latency per ${per}`}
            times={axis.times}
            domain={axis.domain}
            series={charts.latency}
            lines
          />
          <ChartCard
            title={`Tokens per ${per}`}
            times={axis.times}
            domain={axis.domain}
            series={charts.tokens}
            stacked
          />
          <ChartCard title={`Cost per ${per}`} times={axis.times} domain={axis.domain} series={charts.cost} />
        </div>
      ) : null}
      {hasUsage && totals ? (
        <SpendTables bounds={bounds} total={{ cost: totals.cost_usd, tokens: totals.total_tokens }} />
      ) : null}
    </section>
  );
}

function Total(props: { label: string; value: string; testId?: string }) {
  return (
    <div>
      <dt>{props.label}</dt>
      <dd data-testid={props.testId}>{props.value}</dd>
    </div>
  );
}

/** "1 (14.3%)": a count and its share of the requests. */
const countWithShare = (count: number, requests: number): string => {
  const share = shareOf(count, requests);
  return `${formatTokens(count)}${share === null ? "" : ` (${formatShare(share)})`}`;
};

function ChartCard(props: Parameters<typeof TimeChart>[0]) {
  return (
    <div className="card">
      <h2>{props.title}</h2>
      <TimeChart {...props} />
    </div>
  );
}

/** The charts' series over the axis' buckets (null where the API answered no bucket). */
function chartSeries(buckets: readonly (UsageSeriesBucket | null)[]) {
  const of = (value: (b: UsageSeriesBucket) => number | null) => buckets.map((b) => (b ? value(b) : null));
  const requests: ChartSeries[] = [
    { label: "Succeeded", color: "--chart-requests", format: formatTokens, values: of(succeeded) },
    { label: "Errors", color: "--chart-errors", format: formatTokens, values: of((b) => b.errors) },
    { label: "Denied", color: "--chart-denied", format: formatTokens, values: of((b) => b.denied) },
  ];
  const rates: ChartSeries[] = [
    {
      label: "Error rate",
      color: "--chart-errors",
      format: formatShare,
      values: of((b) => shareOf(b.errors, b.requests)),
    },
    {
      label: "Deny rate",
      color: "--chart-denied",
      format: formatShare,
      values: of((b) => shareOf(b.denied, b.requests)),
    },
  ];
  const latency: ChartSeries[] = [
    { label: "p50", color: "--chart-p50", format: formatLatency, values: of((b) => b.latency_p50_ms) },
    { label: "p95", color: "--chart-p95", format: formatLatency, values: of((b) => b.latency_p95_ms) },
  ];
  const tokens: ChartSeries[] = [
    {
      label: "Input tokens",
      color: "--chart-input",
      format: formatTokens,
      values: of((b) => b.input_tokens),
    },
    {
      label: "Output tokens",
      color: "--chart-output",
      format: formatTokens,
      values: of((b) => b.output_tokens),
    },
  ];
  const cost: ChartSeries[] = [
    { label: "Cost", color: "--chart-cost", format: formatUsd, values: of((b) => b.cost_usd) },
  ];
  return { requests, rates, latency, tokens, cost };
}

/** Axis ticks fall between whole milliseconds. */
const formatLatency = (ms: number): string => formatDuration(Math.round(ms));

/** The presets as a segmented control, and the custom range's form (its bounds in the URL). */
function RangePicker(props: { range: TimeRange }) {
  const { range } = props;
  const asInputs = () => ({
    start: isoToLocalInput(range.start.toISOString()),
    end: isoToLocalInput(range.end.toISOString()),
  });
  const [draft, setDraft] = useState<{ start: string; end: string } | undefined>();
  const [errors, setErrors] = useState<{ start?: string; end?: string }>({});
  const custom = draft !== undefined || range.preset === "custom";
  const values = draft ?? asInputs();

  const pickPreset = (preset: RangePreset) => {
    setDraft(undefined);
    setErrors({});
    navigate("/", presetParams(preset), true);
  };
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const start = localInputToIso(values.start);
    const end = localInputToIso(values.end);
    const found = checkCustomRange(start, end);
    setErrors(found);
    if (found.start || found.end) return;
    setDraft(undefined);
    navigate("/", customParams(start, end), true);
  };

  return (
    <div className="range-picker">
      <fieldset className="segmented">
        <legend className="sr-only">Range</legend>
        {RANGE_PRESETS.map((preset) => (
          <button
            key={preset.key}
            type="button"
            aria-pressed={!custom && range.preset === preset.key}
            className={!custom && range.preset === preset.key ? "on" : ""}
            onClick={() => pickPreset(preset.key)}
          >
            {preset.label}
          </button>
        ))}
        <button
          type="button"
          aria-pressed={custom}
          className={custom ? "on" : ""}
          onClick={() => setDraft(draft ?? asInputs())}
        >
          Custom
        </button>
      </fieldset>
      {custom ? (
        <form className="toolbar" onSubmit={apply} noValidate aria-label="Custom range">
          <Field label="From" error={errors.start}>
            {(c) => (
              <input
                {...c}
                type="datetime-local"
                value={values.start}
                onChange={(e) => setDraft({ ...values, start: e.target.value })}
              />
            )}
          </Field>
          <Field label="To" error={errors.end}>
            {(c) => (
              <input
                {...c}
                type="datetime-local"
                value={values.end}
                onChange={(e) => setDraft({ ...values, end: e.target.value })}
              />
            )}
          </Field>
          <button type="submit">Apply range</button>
        </form>
      ) : null}
      <p className="hint">
        Showing {describeRange(range)} in your local time, one bar per {range.granularity}.
      </p>
    </div>
  );
}
