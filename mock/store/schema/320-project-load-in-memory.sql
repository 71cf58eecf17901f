-- A Project's open executions (240-project-load.sql) are counted in memory (mock/store/project-load.ts,
-- counted from executions when an instance first needs them) instead of by triggers writing project_load: every
-- acceptance wrote that table's row as well as the execution's.
DROP TRIGGER IF EXISTS executions_load_insert;
DROP TRIGGER IF EXISTS executions_load_delete;
DROP TRIGGER IF EXISTS executions_load_update;
DROP TABLE IF EXISTS project_load;
