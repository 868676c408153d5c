-- Analytics over usage (apps/telemetry/README.md, "Analytics"): requests, errors, denies and
-- latency over time, and spend by user, group, model and provider, for every request whether it
-- was logged or not. ORDER BY and PARTITION BY are unchanged (see 002 and 004): the new reads
-- filter and bucket like the usage overview.
--
-- usage_events keeps each request's outcome: its status code, the gateway's decision and its
-- duration, typed as in access_logs (a status is any integer in the event contract; an unsigned
-- column would refuse a negative one and with it the whole batch, for ever). Rows written before
-- this migration have none (status 0, decision '', duration 0): they count as requests, neither
-- errors nor denied, and add nothing to latency.
ALTER TABLE usage_events
  ADD COLUMN IF NOT EXISTS status_code Int32,
  ADD COLUMN IF NOT EXISTS decision LowCardinality(String),
  ADD COLUMN IF NOT EXISTS duration_ms UInt32;

-- usage_hourly keeps what an hour's analytics sum and merge: request, error (a request not denied
-- that answered 400 or above) and denied counts, and the latency of its allowed requests as a
-- t-digest state that a read merges across hours and with the unrolled events' own states (a
-- quantile cannot be summed). Each (account, hour) is still recomputed whole from
-- `usage_events FINAL`, so these replace with the rest of the row.
ALTER TABLE usage_hourly
  ADD COLUMN IF NOT EXISTS requests UInt64,
  ADD COLUMN IF NOT EXISTS errors UInt64,
  ADD COLUMN IF NOT EXISTS denied UInt64,
  ADD COLUMN IF NOT EXISTS latency_ms AggregateFunction(quantilesTDigest(0.5, 0.95), UInt32);

-- Hours rolled before this migration have no counts. Forgetting the progress marks makes reads
-- take every hour from usage_events again (exact, slower) until the next roll has recomputed
-- every hour from the oldest usage on, a day per statement, and marked them done; the recomputed
-- rows replace the old ones (newer computed_at). access_log_hourly is recomputed alike.
TRUNCATE TABLE IF EXISTS rollup_progress;
