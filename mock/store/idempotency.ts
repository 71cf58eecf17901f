/** Idempotency receipts: prepared statements and row mapping; looked up by (Project, key) in O(1). */
import { receiptHolds } from '../domain/retention.js'
import type { Db } from './db.js'
import { isExecutionOpen } from './executions.js'

export type IdempotencyRecord = {
  project_id: string
  key: string
  operation_id: string
  path: string
  fingerprint: string
  status: number
  body_json: string
  created_at: number
  expires_at: number
  /** The execution (Turn or Run id) whose end the receipt also waits for, if any. */
  execution_ref: string | null
}

export function getIdempotency(
  db: Db,
  projectId: string,
  key: string,
): IdempotencyRecord | undefined {
  return db
    .cached('SELECT * FROM idempotency WHERE project_id = ? AND key = ?')
    .get(projectId, key) as IdempotencyRecord | undefined
}

/** The receipt of (Project, key) that still answers at nowMs (IDEM rules, RET-001, RET-002), if any. */
export function liveReceipt(
  db: Db,
  projectId: string,
  key: string,
  nowMs: number,
): IdempotencyRecord | undefined {
  const stored = getIdempotency(db, projectId, key)
  if (!stored) return undefined
  const open = stored.execution_ref !== null && isExecutionOpen(db, stored.execution_ref)
  return receiptHolds(stored.expires_at, nowMs, open) ? stored : undefined
}

export function putIdempotency(db: Db, r: IdempotencyRecord): void {
  db.stmt(
    `INSERT OR REPLACE INTO idempotency (project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at, execution_ref)
     VALUES (@project_id, @key, @operation_id, @path, @fingerprint, @status, @body_json, @created_at, @expires_at, @execution_ref)`,
  ).run(r)
}
