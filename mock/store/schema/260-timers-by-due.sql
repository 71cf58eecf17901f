-- Timers stored in their firing order: the table's key is (due_at, seq), so the next due timer is the
-- table's first row and scheduling or firing one writes 3 b-trees (the table, the id index and the subject
-- index) instead of 5 (a rowid table with its id, seq, due and subject indexes). seq stays unique without a
-- constraint of its own: the scheduler's counter only grows (mock/clock/scheduler.ts), and (due_at, seq) is
-- the key. lastTimerSeq's MAX(seq) scans the table, once per process.
CREATE TABLE timers_by_due (
  due_at       INTEGER NOT NULL,
  seq          INTEGER NOT NULL,
  id           TEXT NOT NULL UNIQUE,
  kind         TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  subject      TEXT,
  PRIMARY KEY (due_at, seq)
) WITHOUT ROWID;
INSERT INTO timers_by_due (due_at, seq, id, kind, payload_json, subject)
  SELECT due_at, seq, id, kind, payload_json, subject FROM timers;
DROP TABLE timers;
ALTER TABLE timers_by_due RENAME TO timers;
CREATE INDEX timers_subject ON timers (subject) WHERE subject IS NOT NULL;
