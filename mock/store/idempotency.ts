/** Idempotency receipts: prepared statements and row mapping; looked up by (Project, key) in O(1). */
import type { Db } from './db.js'

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
    .stmt('SELECT * FROM idempotency WHERE project_id = ? AND key = ?')
    .get(projectId, key) as IdempotencyRecord | undefined
}

export function putIdempotency(db: Db, r: IdempotencyRecord): void {
  db.stmt(
    `INSERT OR REPLACE INTO idempotency (project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at, execution_ref)
     VALUES (@project_id, @key, @operation_id, @path, @fingerprint, @status, @body_json, @created_at, @expires_at, @execution_ref)`,
  ).run(r)
}
