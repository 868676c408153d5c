-- access_logs keeps the OpenTelemetry trace id of each request the gateway traced
-- (docs/ARCHITECTURE.md, "Tracing"), so an entry leads to its trace. ORDER BY and PARTITION BY
-- are unchanged (see 001): an entry's trace is read with the entry, never searched by. Rows
-- written before this migration, and requests not traced, have none ('').
ALTER TABLE access_logs ADD COLUMN IF NOT EXISTS trace_id String;
