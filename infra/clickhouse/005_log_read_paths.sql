-- Log reads at millions of rows, second round (docs/PERFORMANCE.md, Telemetry): a user-sorted copy
-- of the filter columns for counts that name a user, its past days merged into one part so FINAL
-- has little to merge, and a sharper session filter for the sessions page.
--
-- access_logs_by_user: the columns access-log filters read, sorted by user first, for counts that
-- name a user. Every read of a member without the account-wide grant is scoped to their own
-- user id, and an admin's user filter is common too. In access_logs, sorted by time, a user's rows
-- are spread over every granule of the account (50 users: 1 row in 50), so a count that names a
-- user read and merged (FINAL) all of the account's keys; here they are one contiguous range of
-- the primary index. Counting, not paging: the entry columns stay in access_logs.
--
-- FINAL merges the parts of a partition whose key ranges overlap, so its cost grows with the parts a
-- day is left in (a bulk load left 4 per day that the merge selector never joined: a user-filtered
-- count took 70 ms over them, 9 ms once each day was one part). min_age_to_force_merge_seconds
-- merges a partition into one part once all of its parts are 10 minutes old: a past day once and
-- for all, today's never while inserts go on (normal merges keep that one small). A late event
-- into a past day costs that day one more merge of this narrow table. Not on access_logs: its
-- sessions page read its entries slower from one part per day (93 -> 177 ms at 5 M rows, not
-- understood yet), and its counts that could gain are the ones this table takes over.
--
-- Same engine, key closure and partitions as access_logs: a redelivered event is the same
-- (account, user, timestamp, id) row again, so FINAL counts it once; day partitions with the same
-- ids, so retention drops a day in both. Filled by a materialized view on every access_logs insert
-- and backfilled from what is stored (a row inserted between the two statements is there twice,
-- which FINAL collapses).
CREATE TABLE IF NOT EXISTS access_logs_by_user (
  account_id String,
  user_id LowCardinality(String),
  timestamp DateTime64(3, 'UTC'),
  id String,
  session_id String,
  model LowCardinality(String),
  resolved_provider_id LowCardinality(String),
  group_ids Array(String),
  decision LowCardinality(String),
  path LowCardinality(String),
  search_text LowCardinality(String)
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMMDD(timestamp)
ORDER BY (account_id, user_id, timestamp, id)
SETTINGS min_age_to_force_merge_seconds = 600, min_age_to_force_merge_on_partition_only = 1;
CREATE MATERIALIZED VIEW IF NOT EXISTS access_logs_by_user_mv TO access_logs_by_user AS
  SELECT account_id, user_id, timestamp, id, session_id, model, resolved_provider_id, group_ids,
    decision, path, search_text
  FROM access_logs;
INSERT INTO access_logs_by_user
  SELECT account_id, user_id, timestamp, id, session_id, model, resolved_provider_id, group_ids,
    decision, path, search_text
  FROM access_logs;

-- session_idx again, with a 0.1 % false-positive rate instead of 1 %: the sessions page looks up
-- its ~50 sessions in every granule's filter, so at 1 % about half the granules of an account
-- answered "maybe" (184 of 590 at 5 M rows; 33 now) and were read for nothing. Costs ~1.5× the
-- index's (small) size.
ALTER TABLE access_logs DROP INDEX IF EXISTS session_idx;
ALTER TABLE access_logs ADD INDEX IF NOT EXISTS session_idx session_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE access_logs MATERIALIZE INDEX session_idx;
