-- A Session's executions were indexed by its random id (executions_session (session_id, seq)): every Turn of a
-- new Session went to a random place of that index. Sessions now have a number in creation order (seq, the
-- rowid they were given, kept in a column of its own so that no rebuild can change it), and each execution
-- of a Session holds it (session_seq): a new Session's Turn goes to the end of the index. Reads by Session id
-- look its number up first (mock/store/executions.ts). Runs hold no Session: the index leaves them out.
ALTER TABLE sessions ADD COLUMN seq INTEGER;
UPDATE sessions SET seq = rowid;
ALTER TABLE executions ADD COLUMN session_seq INTEGER;
UPDATE executions SET session_seq = (SELECT s.seq FROM sessions s WHERE s.id = executions.session_id)
  WHERE session_id IS NOT NULL;
DROP INDEX IF EXISTS executions_session;
CREATE INDEX executions_session ON executions (session_seq, seq) WHERE session_seq IS NOT NULL;
