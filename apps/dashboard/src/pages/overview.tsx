import type { Provider } from "@agentnet/contracts";
import { useMemo } from "react";
import { SplitBars, type SplitRow, UsageChart } from "../components/charts";
import { EmptyState, Field, LoadState } from "../components/ui";
import { isoToLocalInput, localInputToIso } from "../domain/filters";
import { formatTokens, formatUsd } from "../domain/format";
import { defaultRange, dimensionsOf, GRANULARITIES, sumBuckets } from "../domain/usage";
import { useLoad } from "../hooks";
import { Link, type Location, navigate } from "../router";
import { useSession } from "../session";

export function OverviewPage(props: { location: Location }) {
  const { api, accountWide } = useSession();
  const fallback = useMemo(() => defaultRange(new Date()), []);
  const params = props.location.params;
  const start = params.get("start_date") ?? fallback.start;
  const end = params.get("end_date") ?? fallback.end;
  const granularity = params.get("granularity") ?? "day";
  const range = { start_date: start, end_date: end };

  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (!next.has("start_date")) next.set("start_date", start);
    if (!next.has("end_date")) next.set("end_date", end);
    next.set(key, value);
    navigate("/", next, true);
  };

  const usage = useLoad(() => api.usage({ ...range, granularity }), [start, end, granularity]);
  const split = useLoad(async () => {
    const [logs, providers] = await Promise.all([
      api.accessLogs({ ...range, page_size: 100 }),
      accountWide ? api.providers.list().catch((): Provider[] => []) : Promise.resolve<Provider[]>([]),
    ]);
    const dims = dimensionsOf(logs.data);
    const sum = async (query: Record<string, string[]>) =>
      sumBuckets(await api.usage({ ...range, granularity: "month", ...query }));
    const byModel: SplitRow[] = await Promise.all(
      dims.models.map(async (model) => {
        const t = await sum({ model: [model] });
        return { key: model, label: model, tokens: t.total_tokens, cost: t.cost_usd };
      }),
    );
    const byProvider: SplitRow[] = await Promise.all(
      [...dims.providers].map(async ([id, name]) => {
        const t = await sum({ provider_id: [id] });
        const label = providers.find((p) => p.id === id)?.name ?? name;
        return { key: id, label, tokens: t.total_tokens, cost: t.cost_usd };
      }),
    );
    const order = (rows: SplitRow[]) => rows.sort((a, b) => b.tokens - a.tokens);
    return { byModel: order(byModel), byProvider: order(byProvider) };
  }, [start, end]);

  const totals = usage.data ? sumBuckets(usage.data) : undefined;
  const hasUsage = (usage.data ?? []).some((b) => b.total_tokens > 0 || b.cost_usd > 0);

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p className="lede">
        {accountWide ? "Token and cost usage of the whole account." : "Your own token and cost usage."}
      </p>
      <fieldset className="toolbar">
        <legend className="sr-only">Range and granularity</legend>
        <Field label="From">
          {(c) => (
            <input
              {...c}
              type="datetime-local"
              value={isoToLocalInput(start)}
              onChange={(e) => set("start_date", localInputToIso(e.target.value))}
            />
          )}
        </Field>
        <Field label="To">
          {(c) => (
            <input
              {...c}
              type="datetime-local"
              value={isoToLocalInput(end)}
              onChange={(e) => set("end_date", localInputToIso(e.target.value))}
            />
          )}
        </Field>
        <fieldset className="segmented">
          <legend className="sr-only">Granularity</legend>
          {GRANULARITIES.map((g) => (
            <button
              key={g}
              type="button"
              aria-pressed={g === granularity}
              className={g === granularity ? "on" : ""}
              onClick={() => set("granularity", g)}
            >
              {g}
            </button>
          ))}
        </fieldset>
      </fieldset>
      <LoadState loading={usage.loading && !usage.data} error={usage.error} what="usage" />
      {totals ? (
        <dl className="totals">
          <div>
            <dt>Total tokens</dt>
            <dd data-testid="total-tokens">{formatTokens(totals.total_tokens)}</dd>
          </div>
          <div>
            <dt>Input tokens</dt>
            <dd>{formatTokens(totals.input_tokens)}</dd>
          </div>
          <div>
            <dt>Output tokens</dt>
            <dd>{formatTokens(totals.output_tokens)}</dd>
          </div>
          <div>
            <dt>Cached input</dt>
            <dd>{formatTokens(totals.cached_input_tokens)}</dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd data-testid="total-cost">{formatUsd(totals.cost_usd)}</dd>
          </div>
        </dl>
      ) : null}
      {usage.data && !hasUsage ? (
        <EmptyState title="No usage in this range">
          Send a request through the gateway (see <Link to="/agent">Agent config</Link> for the SDK settings),
          or widen the date range.
        </EmptyState>
      ) : null}
      {usage.data && hasUsage ? (
        <div className="card">
          <h2>Tokens per {granularity}</h2>
          <p className="legend">
            <span className="key key-input" /> input <span className="key key-output" /> output
          </p>
          <UsageChart buckets={usage.data} granularity={granularity} />
        </div>
      ) : null}
      {hasUsage ? (
        <div className="grid-2">
          <LoadState
            loading={split.loading && !split.data}
            error={split.error}
            what="the split by model and provider"
          />
          {split.data ? (
            <>
              <div className="card">
                {split.data.byModel.length ? (
                  <SplitBars title="By model" rows={split.data.byModel} />
                ) : (
                  <p>No logged requests to split by model: turn on log collection in Gateway settings.</p>
                )}
              </div>
              <div className="card">
                {split.data.byProvider.length ? (
                  <SplitBars title="By provider" rows={split.data.byProvider} />
                ) : (
                  <p>No logged requests to split by provider.</p>
                )}
              </div>
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
