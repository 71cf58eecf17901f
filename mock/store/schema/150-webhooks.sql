-- Webhooks (Webhook endpoint (management), Webhook management, Webhook notifications): endpoints of a Project
-- (at most 10 not deleted), one delivery per (event, endpoint) or per replay, and each attempt's outcome, which
-- keeps only a fixed error code and the numeric HTTP status (never the receiver's body).
CREATE TABLE webhook_endpoints (
  id                         TEXT PRIMARY KEY,
  seq                        INTEGER NOT NULL,
  project_id                 TEXT NOT NULL,
  url                        TEXT NOT NULL,
  event_types_json           TEXT,              -- NULL: the default set
  status                     TEXT NOT NULL,     -- ACTIVE | DELETED
  secret                     TEXT NOT NULL,
  previous_secret_expires_at INTEGER,
  rotated_at                 INTEGER,
  created_at                 INTEGER NOT NULL,
  updated_at                 INTEGER NOT NULL,
  deleted_at                 INTEGER
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id, status, seq);

CREATE TABLE webhook_deliveries (
  id               TEXT PRIMARY KEY,
  seq              INTEGER NOT NULL UNIQUE,
  project_id       TEXT NOT NULL,
  endpoint_id      TEXT NOT NULL,
  event_id         TEXT NOT NULL,
  event_type       TEXT NOT NULL,
  body             TEXT NOT NULL,             -- the notification, byte for byte the same on every attempt and replay
  status           TEXT NOT NULL,             -- PENDING | SUCCEEDED | FAILED | CANCELED
  attempts         INTEGER NOT NULL DEFAULT 0,
  first_attempt_at INTEGER,
  last_attempt_at  INTEGER,
  next_attempt_at  INTEGER,
  next_timer_id    TEXT,
  last_http_status INTEGER,
  last_error_code  TEXT,
  replay_of        TEXT,
  created_at       INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_project ON webhook_deliveries (project_id, seq);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status);

CREATE TABLE webhook_attempts (
  delivery_id  TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  attempted_at INTEGER NOT NULL,
  http_status  INTEGER,
  error_code   TEXT,
  PRIMARY KEY (delivery_id, attempt)
) WITHOUT ROWID;
