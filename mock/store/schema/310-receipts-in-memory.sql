-- Receipts were found by (project_id, key) through the primary key's index: keys are the clients' own, most
-- of them random, so every new receipt went to a random place of that index (as 300-ids-in-memory.sql says of
-- ids). An instance keeps, per Project and key, the seq of the row holding the pair's receipt in memory
-- (Receipts, mock/store/idempotency.ts, read from the table when it starts); reads check the pair in the row.
-- One row per pair still: a receipt that replaces another updates its row.
CREATE TABLE idempotency_new (
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
  seq           INTEGER PRIMARY KEY
);
INSERT INTO idempotency_new (project_id, key, operation_id, path, fingerprint, status, body_json, created_at,
    expires_at, execution_ref)
  SELECT project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at,
    execution_ref
  FROM idempotency ORDER BY created_at, rowid;
DROP TABLE idempotency;
ALTER TABLE idempotency_new RENAME TO idempotency;
