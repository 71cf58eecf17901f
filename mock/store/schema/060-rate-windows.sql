-- Call-rate windows (Limits > Call rates): one row per counted scope and class, e.g. "key:sk_x:accept".
CREATE TABLE rate_windows (
  scope    TEXT PRIMARY KEY,
  start_ms INTEGER NOT NULL,
  count    INTEGER NOT NULL
);
