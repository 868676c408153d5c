-- usage_hourly_totals: usage_hourly without its dimensions, one row per (account, UTC hour), for
-- the reads that filter on none of them (the account's own overview and series, what the usage
-- page opens on). A 30-day series by hour over usage_hourly merges a latency state per hour and
-- per user, provider, model and groups combination: at 20 M rows of a team of users that took
-- half a second; here it merges 720 (docs/PERFORMANCE.md, "Telemetry reads"). Recomputed whole
-- per (account, hour) from `usage_events FINAL` with usage_hourly, in the same roll
-- (apps/telemetry/src/store/rollup.ts), and replaced by its newest computation
-- (ReplacingMergeTree(computed_at)). ORDER BY the account and hour a read ranges over; monthly
-- partitions like usage_hourly.
CREATE TABLE IF NOT EXISTS usage_hourly_totals (
  account_id String,
  hour DateTime('UTC'),
  input_tokens UInt64,
  output_tokens UInt64,
  total_tokens UInt64,
  cached_input_tokens UInt64,
  cache_creation_tokens UInt64,
  cost_usd Decimal(38, 9),
  input_cost_usd Decimal(38, 9),
  cached_input_cost_usd Decimal(38, 9),
  cache_creation_cost_usd Decimal(38, 9),
  output_cost_usd Decimal(38, 9),
  cache_cost_usd Decimal(38, 9),
  requests UInt64,
  errors UInt64,
  denied UInt64,
  latency_ms AggregateFunction(quantilesTDigest(0.5, 0.95), UInt32),
  computed_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (account_id, hour);

-- Hours rolled before this file have no totals: forgetting the progress marks makes reads take
-- every hour from usage_events (exact, slower) until the next roll has recomputed every hour from
-- the oldest usage on, into all three rollups.
TRUNCATE TABLE IF EXISTS rollup_progress;
