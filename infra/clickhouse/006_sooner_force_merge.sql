-- access_logs_by_user merges a past day into one part once all of its parts are 1 minute old,
-- not 10 (005_log_read_paths.sql). Its FINAL counts cost with the parts a day is left in: after
-- a bulk write (a backfill, this table's own backfill in 005, a consumer catching up on a
-- backlog) a user-filtered count over 5 M rows took 90 ms at four parts a day and 20 ms at one,
-- so the shorter age shortens that window from ~10 to ~1–2 minutes. What it costs: a day that
-- receives a late event is merged again a minute later instead of ten; this table holds only
-- the filter columns (a day of 166,000 rows merges in ~0.1 s). Today's partition is still not
-- force-merged while inserts keep reaching it (normal merges keep it small). ORDER BY and
-- PARTITION BY are unchanged (see 005).
ALTER TABLE access_logs_by_user MODIFY SETTING min_age_to_force_merge_seconds = 60;
