-- The public event log (Events): one row per public change of a Session or a Run. sequence increases within
-- its aggregate only. SSE, Session items and webhooks all read these rows.
CREATE TABLE events (
  event_id       TEXT PRIMARY KEY,
  aggregate_kind TEXT NOT NULL,             -- SESSION | RUN
  aggregate_id   TEXT NOT NULL,
  sequence       INTEGER NOT NULL,
  type           TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  data_json      TEXT NOT NULL,
  project_id     TEXT NOT NULL,
  session_id     TEXT,
  turn_id        TEXT,
  run_id         TEXT,
  step_id        TEXT,
  action_id      TEXT,
  status         TEXT,
  UNIQUE (aggregate_id, sequence)
);
