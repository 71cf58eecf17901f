-- Durable timers (mock/clock/scheduler.ts). Total order (due_at, seq); subject groups the timers of one
-- resource (a Turn, a Run, a webhook delivery) so they can be cancelled together.
CREATE TABLE timers (
  id           TEXT PRIMARY KEY,
  due_at       INTEGER NOT NULL,
  seq          INTEGER NOT NULL UNIQUE,
  kind         TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  subject      TEXT
);
CREATE INDEX timers_due ON timers (due_at, seq);
CREATE INDEX timers_subject ON timers (subject) WHERE subject IS NOT NULL;
