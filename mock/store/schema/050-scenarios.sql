-- Fixture scenarios (the built-in ones live in code) and the queue of scenarios waiting for the next
-- executions of a Deployment or Workflow (POST /_mock/scenarios), taken in insertion order per target.
CREATE TABLE fixture_scenarios (
  name            TEXT PRIMARY KEY,
  position        INTEGER NOT NULL,
  definition_json TEXT NOT NULL
);

CREATE TABLE scenario_queue (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  target_id TEXT NOT NULL,
  scenario  TEXT NOT NULL,
  remaining INTEGER NOT NULL CHECK (remaining > 0)
);
CREATE INDEX scenario_queue_target ON scenario_queue (target_id, seq);
