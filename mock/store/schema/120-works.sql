-- Organization works and their preparations (Usage and works; shapes assumed). A work is named by its title
-- within a Project (title_key: trimmed, spaces collapsed, lower case); each create of it starts a preparation.
-- A preparation's state (status, revision, questions, answers, candidate digest) is one JSON document,
-- advanced by the pure transitions of mock/domain/preparation.ts.
CREATE TABLE works (
  id                    TEXT PRIMARY KEY,
  project_id            TEXT NOT NULL,
  title_key             TEXT NOT NULL,
  title                 TEXT NOT NULL,
  description           TEXT NOT NULL,
  checklist_json        TEXT,
  revision              INTEGER NOT NULL,
  latest_preparation_id TEXT NOT NULL,
  created_at            INTEGER NOT NULL,
  updated_at            INTEGER NOT NULL,
  UNIQUE (project_id, title_key)
);

CREATE TABLE preparations (
  id          TEXT PRIMARY KEY,
  seq         INTEGER NOT NULL,
  project_id  TEXT NOT NULL,
  work_id     TEXT NOT NULL,
  ready_at    INTEGER NOT NULL,            -- when it leaves PREPARING: its SU settles then (usage)
  state_json  TEXT NOT NULL
);
CREATE INDEX preparations_project ON preparations (project_id, seq);
CREATE INDEX preparations_ready ON preparations (project_id, ready_at);
