-- Interactive actions (Interactive action records): a question or approval an execution waits for in
-- REQUIRES_ACTION. status PENDING -> RESOLVED | EXPIRED | CANCELED. material_json holds an approval's review
-- material (content_hash is computed from it), questions_json a question action's questions. step_index is
-- the script step that asked; time_left_ms the execution time left when it paused (re-armed on resume).
CREATE TABLE actions (
  id                TEXT PRIMARY KEY,
  execution_id      TEXT NOT NULL,
  project_id        TEXT NOT NULL,
  kind              TEXT NOT NULL,            -- APPROVAL | QUESTION
  status            TEXT NOT NULL,            -- PENDING | RESOLVED | EXPIRED | CANCELED
  material_json     TEXT,
  questions_json    TEXT,
  content_available INTEGER NOT NULL DEFAULT 1,
  step_index        INTEGER NOT NULL,
  time_left_ms      INTEGER,
  created_at        INTEGER NOT NULL,
  expires_at        INTEGER NOT NULL,
  resolved_at       INTEGER,
  resolution_json   TEXT
);
CREATE INDEX actions_execution ON actions (execution_id, status);

-- The fixture switch (Project interactive_actions) and its control-API toggle: a row means enabled.
CREATE TABLE interactive_action_projects (
  project_id TEXT PRIMARY KEY
);
