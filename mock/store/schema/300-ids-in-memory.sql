-- Sessions and executions were found by id through their primary key's index. Their ids are random (UUIDs),
-- so every new Session and execution went to a random place of that index: a page written, and its cache
-- lines, on every creation. They are now found through a map in memory from id to seq (mock/store/row-ids.ts,
-- read from the table when a connection first needs it), and seq becomes the rowid itself (INTEGER PRIMARY
-- KEY: the number a new row gets, largest plus one, as it was; no rebuild or VACUUM can change it). Reads by
-- id check the id in the row they find (WHERE seq = ? AND id = ?). Ids stay unique: the mock makes them.
CREATE TABLE sessions_new (
  id               TEXT NOT NULL,
  project_id       TEXT NOT NULL,
  deployment_id    TEXT NOT NULL,
  status           TEXT NOT NULL,            -- ACTIVE | CLOSED
  deleted_at       INTEGER,
  metadata_json    TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  workflow_run_id  TEXT,                     -- set for Sessions held by workflow steps
  seq              INTEGER PRIMARY KEY
);
INSERT INTO sessions_new (id, project_id, deployment_id, status, deleted_at, metadata_json, created_at,
    last_activity_at, workflow_run_id, seq)
  SELECT id, project_id, deployment_id, status, deleted_at, metadata_json, created_at, last_activity_at,
    workflow_run_id, seq
  FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_workflow_run ON sessions (workflow_run_id) WHERE workflow_run_id IS NOT NULL;

CREATE TABLE executions_new (
  id                 TEXT NOT NULL,
  seq                INTEGER PRIMARY KEY,
  kind               TEXT NOT NULL,           -- TURN | RUN
  project_id         TEXT NOT NULL,
  api_key            TEXT NOT NULL,
  deployment_id      TEXT,
  session_id         TEXT,
  workflow_id        TEXT,
  published_version  INTEGER,
  status             TEXT NOT NULL,
  error_json         TEXT,
  scenario           TEXT NOT NULL,
  steps_json         TEXT NOT NULL,
  input_json         TEXT NOT NULL,
  metadata_json      TEXT NOT NULL,
  execution_seconds  INTEGER NOT NULL,
  queue_seconds      INTEGER NOT NULL,
  max_su             REAL NOT NULL,
  spent_su           REAL NOT NULL DEFAULT 0,
  usage_status       TEXT NOT NULL DEFAULT 'PENDING',
  created_at         INTEGER NOT NULL,
  admitted_at        INTEGER,
  started_at         INTEGER,
  completed_at       INTEGER,
  terminal           INTEGER NOT NULL DEFAULT 0,
  run_json           TEXT,
  progress_completed INTEGER NOT NULL DEFAULT 0,
  deleted_at         INTEGER,
  cancel_outcome     TEXT,
  run_steps_json     TEXT,
  queue_due_at       INTEGER,
  queue_timer_seq    INTEGER,
  session_seq        INTEGER
);
INSERT INTO executions_new (id, seq, kind, project_id, api_key, deployment_id, session_id, workflow_id,
    published_version, status, error_json, scenario, steps_json, input_json, metadata_json, execution_seconds,
    queue_seconds, max_su, spent_su, usage_status, created_at, admitted_at, started_at, completed_at, terminal,
    run_json, progress_completed, deleted_at, cancel_outcome, run_steps_json, queue_due_at, queue_timer_seq,
    session_seq)
  SELECT id, seq, kind, project_id, api_key, deployment_id, session_id, workflow_id, published_version, status,
    error_json, scenario, steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su,
    spent_su, usage_status, created_at, admitted_at, started_at, completed_at, terminal, run_json,
    progress_completed, deleted_at, cancel_outcome, run_steps_json, queue_due_at, queue_timer_seq, session_seq
  FROM executions;
DROP TABLE executions;
ALTER TABLE executions_new RENAME TO executions;
CREATE INDEX executions_slots ON executions (project_id, terminal, admitted_at, seq);
CREATE INDEX executions_session ON executions (session_seq, seq) WHERE session_seq IS NOT NULL;
-- The triggers that counted the Project's load (240-project-load.sql) went with the old table; the load is
-- counted in memory from here on (320-project-load-in-memory.sql drops project_load).
