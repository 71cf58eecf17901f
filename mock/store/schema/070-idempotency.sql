-- Idempotency receipts (Limits > Retention: at least 24 hours and until the execution ends). One row per
-- Project and Idempotency-Key: the accepted answer, replayed byte for byte to the same request.
CREATE TABLE idempotency (
  project_id    TEXT NOT NULL,
  key           TEXT NOT NULL,
  operation_id  TEXT NOT NULL,
  path          TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,
  status        INTEGER NOT NULL,
  body_json     TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  execution_ref TEXT,
  PRIMARY KEY (project_id, key)
);
