-- usage_events: the token and cost usage of every gateway request, logged or not. Usage is kept
-- after access-log retention and only removed with the account.
--
-- Why per-request rows and not a pre-aggregated (SummingMergeTree / AggregatingMergeTree) table of
-- minute buckets: an aggregate row cannot tell that one of the events it summed was delivered twice,
-- and a batch-level insert dedup token does not help either, because a redelivered batch is not
-- composed like the original one. Keeping one row per request id lets ReplacingMergeTree collapse a
-- redelivered event and lets every read count each id once (LIMIT 1 BY id) before summing into
-- minute/hour/day/week/month buckets at query time.
--
-- ORDER BY (account_id, timestamp, id): the overview reads one account over a time window, so the
-- account and the time range are the index prefix; `id` makes the key unique per request, which is
-- what ReplacingMergeTree collapses on. Only the columns the overview filters and sums are stored.
--
-- PARTITION BY toYYYYMM(timestamp): usage is never swept by age, so there is nothing to gain from
-- daily partitions; monthly ones keep the part count low over years of history.
CREATE TABLE IF NOT EXISTS usage_events (
  account_id String,
  id String,
  timestamp DateTime64(3, 'UTC'),
  user_id String,
  session_id String,
  group_ids Array(String),
  resolved_provider_id String,
  model LowCardinality(String),
  input_tokens UInt32,
  output_tokens UInt32,
  total_tokens UInt32,
  cached_input_tokens UInt32,
  cache_creation_tokens UInt32,
  cost_usd Decimal(38, 9),
  input_cost_usd Decimal(38, 9),
  cached_input_cost_usd Decimal(38, 9),
  cache_creation_cost_usd Decimal(38, 9),
  output_cost_usd Decimal(38, 9),
  cache_cost_usd Decimal(38, 9)
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (account_id, timestamp, id);
