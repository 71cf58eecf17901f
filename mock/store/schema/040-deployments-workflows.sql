-- Published Deployments and Workflows (fixture world), stored with every field the API shows.
CREATE TABLE deployments (
  id                    TEXT PRIMARY KEY,
  position              INTEGER NOT NULL,
  project_id            TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name                  TEXT NOT NULL,
  version               INTEGER NOT NULL,
  status                TEXT NOT NULL CHECK (status IN ('ACTIVE', 'RETIRED')),
  digest                TEXT NOT NULL,
  model_tier            TEXT NOT NULL,
  sandbox_tier          TEXT NOT NULL,
  files_json            TEXT NOT NULL,
  skill_count           INTEGER NOT NULL,
  tools_json            TEXT NOT NULL,
  mcp_count             INTEGER NOT NULL,
  created_at            TEXT NOT NULL,
  revoked_at            TEXT,
  requests_per_minute   INTEGER NOT NULL,
  accept_per_minute     INTEGER NOT NULL,
  read_per_minute       INTEGER NOT NULL,
  outputs_json          TEXT NOT NULL,
  input_mime_types_json TEXT
);
CREATE INDEX deployments_project ON deployments (project_id, position);

CREATE TABLE workflows (
  id                TEXT PRIMARY KEY,
  position          INTEGER NOT NULL,
  project_id        TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name              TEXT NOT NULL,
  published_version INTEGER NOT NULL,
  available         INTEGER NOT NULL,
  error_code        TEXT,
  input_schema_json TEXT NOT NULL,
  outputs_json      TEXT NOT NULL,
  limits_json       TEXT NOT NULL,
  steps             INTEGER NOT NULL,
  allows_partial    INTEGER NOT NULL,
  needs_approval    INTEGER NOT NULL
);
CREATE INDEX workflows_project ON workflows (project_id, position);
