-- Runs share the executions table with Turns (kind RUN). These columns hold what only a Run has: the facts frozen
-- at acceptance (run_json: whole-Run deadline, retention_days, step count, result contract, partial-results
-- permission, bound file ids), the count of unique steps done, the delete time (reads blocked at once) and the
-- control API's switch that makes a cancel end FAILED with EXTERNAL_EFFECT_UNKNOWN.
ALTER TABLE executions ADD COLUMN run_json TEXT;
ALTER TABLE executions ADD COLUMN progress_completed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN deleted_at INTEGER;
ALTER TABLE executions ADD COLUMN cancel_outcome TEXT;
CREATE INDEX executions_workflow ON executions (workflow_id, terminal);
