-- A Project's open executions (240-project-load.sql) are counted in memory (mock/store/project-load.ts,
-- counted from executions when an instance first needs them) instead of by triggers writing project_load: every
-- acceptance wrote that table's row as well as the execution's. Its triggers went with the executions table
-- rebuilt by 300-ids-in-memory.sql (dropped here too in case a store kept them).
DROP TRIGGER IF EXISTS executions_load_insert;
DROP TRIGGER IF EXISTS executions_load_delete;
DROP TRIGGER IF EXISTS executions_load_update;
DROP TABLE IF EXISTS project_load;
