-- access_log_session_keys takes over from access_log_sessions: the same one row per real session once
-- merged, keyed by a 64-bit hash of session_id instead of the id. The unfiltered sessions count
-- reads it with FINAL, which compares the sort keys of every row: a session id of ~20 bytes made
-- that 36–47 ms at 900,000 sessions (20 M requests), the larger half of the sessions page; 8 bytes
-- take 7–14 ms (docs/PERFORMANCE.md, "Telemetry reads"). Two ids sharing a hash would count once:
-- at a million sessions of an account, a chance of about one in 36 million.
CREATE TABLE IF NOT EXISTS access_log_session_keys (
  account_id String,
  session_key UInt64,
  ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree
ORDER BY (account_id, session_key);
CREATE MATERIALIZED VIEW IF NOT EXISTS access_log_session_keys_mv TO access_log_session_keys AS
  SELECT account_id, sipHash64(session_id) AS session_key, max(timestamp) AS ended_at
  FROM access_logs WHERE session_id != ''
  GROUP BY account_id, session_key;
-- Backfilled after the view exists, so nothing falls between; a repeat is harmless.
INSERT INTO access_log_session_keys
  SELECT account_id, sipHash64(session_id) AS session_key, max(timestamp) AS ended_at
  FROM access_logs WHERE session_id != ''
  GROUP BY account_id, session_key;
-- access_log_sessions and its view stay, still filled, retained and deleted with the account,
-- while telemetry replicas of the version before this file may be serving: during a rolling
-- upgrade they count sessions there. A later migration drops them.
