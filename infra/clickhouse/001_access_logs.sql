-- access_logs: one row per gateway request that was logged (log collection on at request time).
--
-- ORDER BY (account_id, timestamp, id): every read is scoped to one account and usually to a time
-- window, and the default page order is timestamp descending, so one account's rows form one
-- contiguous, time-sorted range of the primary index. `id` closes the key so that it is unique per
-- request: ReplacingMergeTree collapses rows with equal sorting keys, and a redelivered event (same
-- id, hence same timestamp and account) is exactly such a row. Reads never rely on the merge having
-- happened (they collapse by id themselves, see apps/telemetry/README.md), so no query needs FINAL.
--
-- PARTITION BY toYYYYMMDD(timestamp): one partition per UTC day. Retention drops a whole day with
-- ALTER TABLE ... DROP PARTITION when every account holding rows in it is past its retention, and
-- only falls back to a DELETE mutation for accounts that keep rows longer. A duplicate always lands
-- in the same partition as its original (same timestamp), so the merge can collapse it.
CREATE TABLE IF NOT EXISTS access_logs (
  account_id String,
  id String,
  timestamp DateTime64(3, 'UTC'),
  service_id String,
  status_code Int32,
  duration_ms UInt32,
  user_id String,
  user_email String,
  user_name String,
  source_ip String,
  method LowCardinality(String),
  host String,
  path String,
  provider LowCardinality(String),
  model LowCardinality(String),
  session_id String,
  resolved_provider_id String,
  selected_policy_id String,
  decision LowCardinality(String),
  deny_reason LowCardinality(String),
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
  cache_cost_usd Decimal(38, 9),
  stream Bool,
  group_ids Array(String),
  request_prompt String,
  response_completion String
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(timestamp)
ORDER BY (account_id, timestamp, id);
