-- Per Project and UTC day (settled_at / 86,400,000), an upper bound of the SU the ledger settled that day, in
-- millionths: each row counts CAST(su * 1e6 AS INTEGER) + 1, which is above su * 1e6 whatever its sign. Kept by
-- triggers on every insert, update and delete of usage_ledger (a rolled-back write rolls its count back with
-- it). An acceptance's budget check (execution/ledger.ts) reads the day's bound and the month's days (at most
-- 31 rows) instead of summing every row settled this month; only when a bound does not settle the check is the
-- exact sum read. Integer sums never drift.
CREATE TABLE usage_days (
  project_id TEXT NOT NULL,
  day        INTEGER NOT NULL,
  su_micro   INTEGER NOT NULL,
  PRIMARY KEY (project_id, day)
) WITHOUT ROWID;

INSERT INTO usage_days (project_id, day, su_micro)
  SELECT project_id, settled_at / 86400000, SUM(CAST(su * 1000000 AS INTEGER) + 1)
  FROM usage_ledger GROUP BY project_id, settled_at / 86400000;

CREATE TRIGGER usage_days_insert AFTER INSERT ON usage_ledger
BEGIN
  INSERT INTO usage_days (project_id, day, su_micro)
    VALUES (NEW.project_id, NEW.settled_at / 86400000, CAST(NEW.su * 1000000 AS INTEGER) + 1)
    ON CONFLICT (project_id, day) DO UPDATE SET su_micro = su_micro + excluded.su_micro;
END;

CREATE TRIGGER usage_days_delete AFTER DELETE ON usage_ledger
BEGIN
  UPDATE usage_days SET su_micro = su_micro - (CAST(OLD.su * 1000000 AS INTEGER) + 1)
    WHERE project_id = OLD.project_id AND day = OLD.settled_at / 86400000;
END;

CREATE TRIGGER usage_days_update AFTER UPDATE OF project_id, su, settled_at ON usage_ledger
BEGIN
  UPDATE usage_days SET su_micro = su_micro - (CAST(OLD.su * 1000000 AS INTEGER) + 1)
    WHERE project_id = OLD.project_id AND day = OLD.settled_at / 86400000;
  INSERT INTO usage_days (project_id, day, su_micro)
    VALUES (NEW.project_id, NEW.settled_at / 86400000, CAST(NEW.su * 1000000 AS INTEGER) + 1)
    ON CONFLICT (project_id, day) DO UPDATE SET su_micro = su_micro + excluded.su_micro;
END;
