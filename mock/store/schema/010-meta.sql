-- Key-value state of the mock itself: the virtual clock, the id generator's epoch and counter, the world flag.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
