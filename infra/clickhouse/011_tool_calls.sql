-- access_logs keeps what an MCP tool call's row adds to a request's (docs/API.md "MCP gateway"): the
-- server's id and name, the tool, and the bytes each way. Its provider ('mcp') and model
-- ('{server}__{tool}') are in the existing columns, so every filter, session and usage breakdown
-- that reads them shows tool calls beside model calls without a change; this column is only read
-- with its entry, never filtered, sorted or summed by, so it is JSON text in a String as the
-- attempts are (009). ORDER BY and PARTITION BY are unchanged (see 001). Rows of model calls, and
-- rows written before this migration, have none ('').
ALTER TABLE access_logs ADD COLUMN IF NOT EXISTS tool_call String;
