-- Result file preparation (ERR-087, TIME-002): an artifact published while its file is still being prepared
-- answers 409 ARTIFACT_NOT_READY until ready_at (ms). NULL: ready since it was stored.
ALTER TABLE files ADD COLUMN ready_at INTEGER;
