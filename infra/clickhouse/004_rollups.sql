-- Reads at millions of rows per account without scanning them (docs/PERFORMANCE.md, Telemetry).
--
-- LowCardinality for the strings with few distinct values per account (users, their emails and
-- names, hosts, paths, providers, policies): a filter or a case-insensitive search on them is
-- evaluated once per dictionary entry instead of once per row, and the column reads as small
-- indices. Sort keys are unchanged. MODIFY COLUMN rewrites those columns in existing parts (a
-- mutation; cheap pre-release).
ALTER TABLE access_logs
  MODIFY COLUMN service_id LowCardinality(String),
  MODIFY COLUMN user_id LowCardinality(String),
  MODIFY COLUMN user_email LowCardinality(String),
  MODIFY COLUMN user_name LowCardinality(String),
  MODIFY COLUMN host LowCardinality(String),
  MODIFY COLUMN path LowCardinality(String),
  MODIFY COLUMN resolved_provider_id LowCardinality(String),
  MODIFY COLUMN selected_policy_id LowCardinality(String);
ALTER TABLE usage_events
  MODIFY COLUMN user_id LowCardinality(String),
  MODIFY COLUMN resolved_provider_id LowCardinality(String);

-- search_text: the five low-cardinality fields `search` looks in, joined by NUL, so a search reads
-- one dictionary-encoded column and evaluates once per distinct combination instead of five times
-- per row (`id`, unique per row, is still searched on its own). A search text without NUL cannot
-- match across a separator, so matching the joined text is matching one of the fields; a search
-- with NUL uses the fields themselves (apps/telemetry/src/store/filters.ts). MATERIALIZE computes
-- it for existing parts (a mutation; cheap pre-release).
ALTER TABLE access_logs
  ADD COLUMN IF NOT EXISTS search_text LowCardinality(String)
  MATERIALIZED concat(host, '\0', path, '\0', model, '\0', user_email, '\0', user_name);
ALTER TABLE access_logs MATERIALIZE COLUMN search_text;

-- usage_hourly: usage_events summed per account, UTC hour and filterable dimension (everything
-- the overview filters on but session_id), so a 30-day overview reads thousands of rows, not
-- millions. It is never summed from a stream of inserts (a sum cannot forget a redelivered
-- event): each (account, hour) is recomputed whole from `usage_events FINAL`, and the newest
-- computation replaces the older ones (ReplacingMergeTree(computed_at), ORDER BY the hour's
-- dimensions). A recomputation only ever adds dimension combinations, because usage rows are
-- only removed with the whole account. Monthly partitions like usage_events.
CREATE TABLE IF NOT EXISTS usage_hourly (
  account_id String,
  hour DateTime('UTC'),
  user_id LowCardinality(String),
  resolved_provider_id LowCardinality(String),
  model LowCardinality(String),
  group_ids Array(String),
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
  computed_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (account_id, hour, user_id, resolved_provider_id, model, group_ids);

-- access_log_hourly: access_logs entries and singleton entries (no session id) per account and UTC
-- hour, recomputed whole from `access_logs FINAL` like usage_hourly, with the same progress marks.
-- The unfiltered log count and session count read rolled hours here. One row per (account, hour),
-- so a recomputation replaces it whole. Daily partitions with the same ids as access_logs': a day
-- retention drops there is dropped here too; a row-wise retention delete removes the account's
-- hours up to its cutoff here and recomputes the hour the cutoff falls in.
CREATE TABLE IF NOT EXISTS access_log_hourly (
  account_id String,
  hour DateTime('UTC'),
  entries UInt64,
  singletons UInt64,
  computed_at DateTime64(6, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMMDD(hour)
ORDER BY (account_id, hour);

-- rollup_progress: how far usage_hourly and access_log_hourly are built
-- (apps/telemetry/src/store/rollup.ts). `claimed`: hours before it are being or have been rolled,
-- so an ingest that writes an event into such an hour recomputes that hour; `done`: hours before
-- it are rolled, so reads take them from the rollups. Append-only, read with max(); one row per
-- advance. Tiny, hence no partitions.
CREATE TABLE IF NOT EXISTS rollup_progress (
  rollup LowCardinality(String),
  claimed DateTime('UTC'),
  done DateTime('UTC'),
  written_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = MergeTree
ORDER BY rollup;

-- access_log_sessions: one row per real session (session_id not empty) once merged, so the
-- unfiltered sessions list counts sessions without hashing every entry's session_id. Only
-- duplicate-proof aggregates live here (max of the last activity: a redelivered entry changes
-- nothing). Filled by a materialized view on every access_logs insert, then backfilled from the
-- rows already there (after the view exists, so nothing falls between; a repeat is harmless).
-- Retention removes a session once its last activity is past the account's cutoff.
CREATE TABLE IF NOT EXISTS access_log_sessions (
  account_id String,
  session_id String,
  ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree
ORDER BY (account_id, session_id);
CREATE MATERIALIZED VIEW IF NOT EXISTS access_log_sessions_mv TO access_log_sessions AS
  SELECT account_id, session_id, max(timestamp) AS ended_at
  FROM access_logs WHERE session_id != ''
  GROUP BY account_id, session_id;
INSERT INTO access_log_sessions
  SELECT account_id, session_id, max(timestamp) AS ended_at
  FROM access_logs WHERE session_id != ''
  GROUP BY account_id, session_id;
