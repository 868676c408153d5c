import { type FormEvent, useMemo, useState } from "react";
import { SpendTables } from "../components/charts";
import { type ChartSeries, TimeChart } from "../components/time-chart";
import { EmptyState, Field, LoadState } from "../components/ui";
import { isoToLocalInput, localInputToIso, MAX_PAGE_SIZE } from "../domain/filters";
import { formatShare, formatTokens, formatUsd } from "../domain/format";
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
  type TimeAxis,
  type TimeRange,
} from "../domain/time-range";
import { sumBuckets } from "../domain/usage";
import { useLoad } from "../hooks";
import { Link, type Location, navigate } from "../router";
import { useSession } from "../session";

export function OverviewPage(props: { location: Location }) {
  const { api, accountWide } = useSession();
  const query = props.location.params.toString();
  // A preset ends now: now is when its URL was opened, not each render.
  const range = useMemo(() => rangeFromParams(new URLSearchParams(query), new Date()), [query]);
  const bounds = rangeBounds(range);
  const deps = [bounds.start_date, bounds.end_date, range.granularity];

  const usage = useLoad(() => api.usage({ ...bounds, granularity: range.granularity }), deps);
  // Request counts come from the access log (the usage buckets carry none), counted by the API.
  const logged = useLoad(
    () =>
      Promise.all([
        api.accessLogs({ ...bounds, page_size: MAX_PAGE_SIZE }),
        api.accessLogs({ ...bounds, page_size: 1, decision: "deny" }),
      ]),
    deps,
  );

  const axis = useMemo(
    () => (usage.data ? placeOnTimeAxis(range, usage.data) : undefined),
    [usage.data, range],
  );
  const charts = useMemo(() => axis && chartSeries(axis.buckets), [axis]);
  const totals = usage.data ? sumBuckets(usage.data) : undefined;
  const requests = logged.data?.[0].total_records ?? 0;
  const denied = logged.data?.[1].total_records ?? 0;
  const hasUsage = (totals?.total_tokens ?? 0) > 0 || (totals?.cost_usd ?? 0) > 0 || requests > 0;

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p className="lede">
        {accountWide ? "Token and cost usage of the whole account." : "Your own token and cost usage."}
      </p>
      <RangePicker range={range} />
      <LoadState loading={usage.loading && !usage.data} error={usage.error ?? logged.error} what="usage" />
      {totals && logged.data ? (
        <dl className="totals">
          <Total label="Total tokens" testId="total-tokens" value={formatTokens(totals.total_tokens)} />
          <Total label="Input tokens" value={formatTokens(totals.input_tokens)} />
          <Total label="Output tokens" value={formatTokens(totals.output_tokens)} />
          <Total label="Cached input" value={formatTokens(totals.cached_input_tokens)} />
          <Total label="Cost" testId="total-cost" value={formatUsd(totals.cost_usd)} />
          <Total label="Logged requests" testId="total-requests" value={formatTokens(requests)} />
          <Total
            label="Denied"
            testId="denied-requests"
            value={`${formatTokens(denied)}${requests > 0 ? ` (${formatShare(denied / requests)})` : ""}`}
          />
        </dl>
      ) : null}
      {usage.data && logged.data && !hasUsage ? (
        <EmptyState title="No usage in this range">
          Send a request through the gateway (see <Link to="/agent">Agent config</Link> for the SDK settings),
          or pick a longer range.
        </EmptyState>
      ) : null}
      {axis && charts && hasUsage ? (
        <div className="grid-2">
          <div className="card">
            <h2>Tokens per {range.granularity}</h2>
            <TimeChart
              title={`Tokens per ${range.granularity}`}
              times={axis.times}
              domain={axis.domain}
              series={charts.tokens}
              stacked
            />
          </div>
          <div className="card">
            <h2>Cost per {range.granularity}</h2>
            <TimeChart
              title={`Cost per ${range.granularity}`}
              times={axis.times}
              domain={axis.domain}
              series={charts.cost}
            />
          </div>
        </div>
      ) : null}
      {hasUsage && logged.data ? <SpendTables bounds={bounds} sample={logged.data[0].data} /> : null}
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

function chartSeries(buckets: TimeAxis["buckets"]) {
  const tokens: ChartSeries[] = [
    {
      label: "Input tokens",
      color: "--chart-input",
      format: formatTokens,
      values: buckets.map((b) => b?.input_tokens ?? null),
    },
    {
      label: "Output tokens",
      color: "--chart-output",
      format: formatTokens,
      values: buckets.map((b) => b?.output_tokens ?? null),
    },
  ];
  const cost: ChartSeries[] = [
    {
      label: "Cost",
      color: "--chart-cost",
      format: formatUsd,
      values: buckets.map((b) => b?.cost_usd ?? null),
    },
  ];
  return { tokens, cost };
}

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
