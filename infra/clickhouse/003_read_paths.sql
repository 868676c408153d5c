-- Read paths at millions of rows per account (docs/PERFORMANCE.md, apps/telemetry/README.md).
--
-- Reads now collapse redelivered duplicates with FINAL instead of `LIMIT 1 BY id` / uniqExact(id),
-- which had to hash every id in the filtered range. The tables keep their engines and keys:
-- ReplacingMergeTree ORDER BY (account_id, timestamp, id) makes FINAL exact, and because a
-- duplicate shares its original's timestamp it lands in the same partition, so FINAL never merges
-- across partitions (ClickHouse decides that on its own since the partition key is a function of
-- the sorting key) and skips the merge for partitions with a single part or non-overlapping parts.
-- Ingest writes time-ordered batches, so most parts do not overlap and FINAL costs close to a plain
-- read. No data is rewritten and nothing is dropped.
--
-- session_idx: a session's entries are close in time, so a bloom filter per granule lets the
-- sessions page aggregate its 50 sessions over the whole filter range (`has(ids, session_id)`)
-- by reading the few granules that hold them instead of scanning session_id for the account.
-- MATERIALIZE builds it for parts written before this migration (a mutation; cheap pre-release).
ALTER TABLE access_logs ADD INDEX IF NOT EXISTS session_idx session_id TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE access_logs MATERIALIZE INDEX session_idx;
