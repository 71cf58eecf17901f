-- Projects and their API keys (fixture world). JSON columns hold small lists read whole with their row.
CREATE TABLE projects (
  id                  TEXT PRIMARY KEY,
  position            INTEGER NOT NULL,
  name                TEXT NOT NULL,
  approved            INTEGER NOT NULL,
  owner_token         TEXT NOT NULL UNIQUE,
  su_balance          REAL NOT NULL,
  daily_budget_su     REAL NOT NULL,
  monthly_budget_su   REAL NOT NULL,
  storage_limit_bytes INTEGER NOT NULL
);

CREATE TABLE api_keys (
  key                 TEXT PRIMARY KEY,
  position            INTEGER NOT NULL,
  project_id          TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name                TEXT NOT NULL,
  scopes_json         TEXT NOT NULL,
  deployment_ids_json TEXT NOT NULL,
  expires_at          INTEGER,
  revoked             INTEGER NOT NULL DEFAULT 0,
  accept_per_minute   INTEGER,
  read_per_minute     INTEGER
);
CREATE INDEX api_keys_project ON api_keys (project_id, position);
