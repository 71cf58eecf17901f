-- A timer's id is its key, "<due_at>.<seq>" (mock/store/timers.ts timerIdOf): unique and never reused, since
-- seq only grows. A timer is found by its id through the table's key, so the UNIQUE index of a separate random
-- id goes: scheduling or firing a timer writes 2 b-trees (the table and the subject index) instead of 3. The
-- ids of pending timers are rewritten, and a webhook delivery's next attempt follows its timer (a delivery
-- that names a timer no longer pending keeps no id: that timer can neither fire nor be canceled).
CREATE TABLE timers_keyed (
  due_at       INTEGER NOT NULL,
  seq          INTEGER NOT NULL,
  id           TEXT NOT NULL,
  kind         TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  subject      TEXT,
  PRIMARY KEY (due_at, seq)
) WITHOUT ROWID;
INSERT INTO timers_keyed (due_at, seq, id, kind, payload_json, subject)
  SELECT due_at, seq, due_at || '.' || seq, kind, payload_json, subject FROM timers;
UPDATE webhook_deliveries
  SET next_timer_id = (SELECT t.due_at || '.' || t.seq FROM timers t WHERE t.id = webhook_deliveries.next_timer_id)
  WHERE next_timer_id IS NOT NULL;
DROP TABLE timers;
ALTER TABLE timers_keyed RENAME TO timers;
CREATE INDEX timers_subject ON timers (subject) WHERE subject IS NOT NULL;
