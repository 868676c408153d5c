-- access_logs keeps the attempts of a request that took more than one (a retry or a fallback across
-- a policy's providers, docs/API.md "Routing"): the row is still one per request, of the attempt
-- that answered, and lists the others. ORDER BY and PARTITION BY are unchanged (see 001): the list
-- is read with its entry, never filtered, sorted or summed by, since sessions and analytics count
-- requests, not attempts. So it is the list's JSON text in a String, not an Array(Tuple) or
-- Nested: rows stay positional JSON lines of plain values, a session's entries keep reading as one
-- tuple of columns, and named tuples' JSON settings cannot differ between a server and chDB. At
-- most five attempts (MAX_ATTEMPTS_LISTED). Rows written before this migration, and requests
-- answered on their first attempt, have none ('').
ALTER TABLE access_logs ADD COLUMN IF NOT EXISTS attempts String;
