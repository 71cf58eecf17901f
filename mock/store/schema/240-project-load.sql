-- A Project's open (not terminal) executions, kept by triggers on every insert, update and delete of an
-- execution, so every path that opens, admits or ends one is counted (and a rolled-back write rolls its count
-- back with it): open_n, waiting_n (open and not admitted: the waiting cap) and max_su_micro, the sum over the
-- open executions of max_su in millionths rounded up (CAST(max_su * 1e6 AS INTEGER) + 1). Integer sums never
-- drift; max_su_micro is an upper bound of what the open executions hold in reserve (max_su - spent_su), which
-- settles most acceptances without summing them (execution/accept.ts reserveSu).
CREATE TABLE project_load (
  project_id   TEXT PRIMARY KEY,
  open_n       INTEGER NOT NULL,
  waiting_n    INTEGER NOT NULL,
  max_su_micro INTEGER NOT NULL
) WITHOUT ROWID;

-- The exact sum of open reservations is now read only when the bound does not settle an acceptance: its
-- covering index (230-executions-open-su.sql) is no longer worth its upkeep on every execution write; the sum
-- searches executions_slots (project_id, terminal) instead.
DROP INDEX IF EXISTS executions_open_su;

INSERT INTO project_load (project_id, open_n, waiting_n, max_su_micro)
  SELECT project_id, COUNT(*), SUM(admitted_at IS NULL), SUM(CAST(max_su * 1000000 AS INTEGER) + 1)
  FROM executions WHERE terminal = 0 GROUP BY project_id;

CREATE TRIGGER executions_load_insert AFTER INSERT ON executions WHEN NEW.terminal = 0
BEGIN
  INSERT INTO project_load (project_id, open_n, waiting_n, max_su_micro)
    VALUES (NEW.project_id, 1, NEW.admitted_at IS NULL, CAST(NEW.max_su * 1000000 AS INTEGER) + 1)
    ON CONFLICT (project_id) DO UPDATE SET open_n = open_n + 1, waiting_n = waiting_n + excluded.waiting_n,
      max_su_micro = max_su_micro + excluded.max_su_micro;
END;

CREATE TRIGGER executions_load_delete AFTER DELETE ON executions WHEN OLD.terminal = 0
BEGIN
  UPDATE project_load SET open_n = open_n - 1, waiting_n = waiting_n - (OLD.admitted_at IS NULL),
      max_su_micro = max_su_micro - (CAST(OLD.max_su * 1000000 AS INTEGER) + 1)
    WHERE project_id = OLD.project_id;
END;

CREATE TRIGGER executions_load_update AFTER UPDATE OF project_id, terminal, admitted_at, max_su ON executions
  WHEN (OLD.terminal = 0 OR NEW.terminal = 0) AND (OLD.project_id IS NOT NEW.project_id
    OR OLD.terminal IS NOT NEW.terminal OR (OLD.admitted_at IS NULL) IS NOT (NEW.admitted_at IS NULL)
    OR OLD.max_su IS NOT NEW.max_su)
BEGIN
  UPDATE project_load SET open_n = open_n - 1, waiting_n = waiting_n - (OLD.admitted_at IS NULL),
      max_su_micro = max_su_micro - (CAST(OLD.max_su * 1000000 AS INTEGER) + 1)
    WHERE project_id = OLD.project_id AND OLD.terminal = 0;
  INSERT INTO project_load (project_id, open_n, waiting_n, max_su_micro)
    SELECT NEW.project_id, 1, NEW.admitted_at IS NULL, CAST(NEW.max_su * 1000000 AS INTEGER) + 1
    WHERE NEW.terminal = 0
    ON CONFLICT (project_id) DO UPDATE SET open_n = open_n + 1, waiting_n = waiting_n + excluded.waiting_n,
      max_su_micro = max_su_micro + excluded.max_su_micro;
END;
