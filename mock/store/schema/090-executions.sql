-- Sessions and executions (Turns, and later Runs) with their output items. An execution is admitted when a
-- Project slot is free (2 at a time) and waits QUEUED otherwise; `seq` orders the wait (first come first).
CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  project_id       TEXT NOT NULL,
  deployment_id    TEXT NOT NULL,
  status           TEXT NOT NULL,            -- ACTIVE | CLOSED
  deleted_at       INTEGER,
  metadata_json    TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  workflow_run_id  TEXT                      -- set for Sessions held by workflow steps
);

CREATE TABLE executions (
  id                TEXT PRIMARY KEY,
  seq               INTEGER NOT NULL,
  kind              TEXT NOT NULL,           -- TURN | RUN
  project_id        TEXT NOT NULL,
  api_key           TEXT NOT NULL,
  deployment_id     TEXT,
  session_id        TEXT,
  workflow_id       TEXT,
  published_version INTEGER,
  status            TEXT NOT NULL,
  error_json        TEXT,
  scenario          TEXT NOT NULL,
  steps_json        TEXT NOT NULL,
  input_json        TEXT NOT NULL,
  metadata_json     TEXT NOT NULL,
  execution_seconds INTEGER NOT NULL,
  queue_seconds     INTEGER NOT NULL,
  max_su            REAL NOT NULL,
  spent_su          REAL NOT NULL DEFAULT 0,
  usage_status      TEXT NOT NULL DEFAULT 'PENDING',
  created_at        INTEGER NOT NULL,
  admitted_at       INTEGER,
  started_at        INTEGER,
  completed_at      INTEGER,
  terminal          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX executions_session ON executions (session_id, seq);
CREATE INDEX executions_slots ON executions (project_id, terminal, admitted_at, seq);

CREATE TABLE outputs (
  id           TEXT PRIMARY KEY,
  execution_id TEXT NOT NULL,
  position     INTEGER NOT NULL,
  item_json    TEXT NOT NULL
);
CREATE INDEX outputs_execution ON outputs (execution_id, position);
