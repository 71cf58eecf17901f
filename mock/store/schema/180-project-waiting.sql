-- How many accepted executions may wait for a Project slot before an acceptance is 429 CONCURRENCY_LIMIT
-- (assumed: the document does not say where "beyond the limit" starts). Fixture field max_waiting_executions.
ALTER TABLE projects ADD COLUMN max_waiting_executions INTEGER NOT NULL DEFAULT 10;
