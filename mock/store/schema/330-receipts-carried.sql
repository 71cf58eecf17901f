-- The receipt of a request that created an execution (createSession, addTurn, createRun) is carried by that
-- execution's row instead of a row of idempotency (mock/store/idempotency.ts): its key, its request's
-- fingerprint and its expiry. The answer it replays is rebuilt from the row (mock/http/receipt-bodies.ts: ids,
-- the constant status QUEUED and idempotency_expires_at); created_at is the execution's, the receipt's end
-- also the execution's (terminal). Every creation wrote a receipt row beside the execution's.
ALTER TABLE executions ADD COLUMN receipt_key TEXT;
ALTER TABLE executions ADD COLUMN receipt_fingerprint TEXT;
ALTER TABLE executions ADD COLUMN receipt_expires_at INTEGER;
