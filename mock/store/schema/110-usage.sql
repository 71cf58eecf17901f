-- SU ledger (Limits > SU budgets; Usage): one row per settled cost of one category, with the ids it belongs
-- to and the virtual time it settled. Budget windows sum it by (project_id, settled_at); GET /v1/usage sums it
-- by the filter's id. Amounts only grow: an execution is recorded once, when its usage becomes FINAL.
CREATE TABLE usage_ledger (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id    TEXT NOT NULL,
  execution_id  TEXT,                      -- the Turn or Run whose settlement this is (null: control API)
  deployment_id TEXT,
  session_id    TEXT,
  turn_id       TEXT,
  run_id        TEXT,                      -- a Run, or the Run a workflow-held Session's Turn belongs to
  category      TEXT NOT NULL,             -- model | search | execution_environment | file_storage_transfer
  su            REAL NOT NULL,
  settled_at    INTEGER NOT NULL
);
CREATE INDEX usage_ledger_window ON usage_ledger (project_id, settled_at);
CREATE INDEX usage_ledger_deployment ON usage_ledger (deployment_id);
CREATE INDEX usage_ledger_session ON usage_ledger (session_id);
CREATE INDEX usage_ledger_turn ON usage_ledger (turn_id);
CREATE INDEX usage_ledger_run ON usage_ledger (run_id);
