/** Idempotency receipts: prepared statements and row mapping; found by (Project, key) through a map in memory. */
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

/** The columns of a receipt (its row less seq). */
const RECEIPT_COLUMNS =
  'project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at, execution_ref'

/** The receipt of a row, if the row holds the pair's (a seq the keys kept may be stale). */
function receiptAt(
  db: Db,
  seq: number,
  projectId: string,
  key: string,
): IdempotencyRecord | undefined {
  return db
    .cached(
      `SELECT ${RECEIPT_COLUMNS} FROM idempotency WHERE seq = ? AND project_id = ? AND key = ?`,
    )
    .get(seq, projectId, key) as IdempotencyRecord | undefined
}

/** Stores a new row and returns its seq. */
function insertReceipt(db: Db, r: IdempotencyRecord): number {
  const info = db
    .stmt(
      `INSERT INTO idempotency (${RECEIPT_COLUMNS})
       VALUES (@project_id, @key, @operation_id, @path, @fingerprint, @status, @body_json, @created_at, @expires_at, @execution_ref)`,
    )
    .run(r)
  return Number(info.lastInsertRowid)
}

/** Replaces the receipt a row holds. */
function replaceReceipt(db: Db, seq: number, r: IdempotencyRecord): void {
  db.stmt(
    `UPDATE idempotency SET operation_id = @operation_id, path = @path, fingerprint = @fingerprint, status = @status,
       body_json = @body_json, created_at = @created_at, expires_at = @expires_at, execution_ref = @execution_ref
     WHERE seq = @seq`,
  ).run({ ...r, seq })
}

/**
 * One instance's idempotency receipts, found through a map in memory: per Project and key, the seq of the row
 * that holds the pair's receipt. Most keyed requests carry a key never used before: a key the map lacks has
 * no receipt, without reading the store.
 *
 * The map holds every stored pair and may hold more: the rows read from the table when the instance starts and
 * again after every committed world reset (Db.onWorldCleared), and every row put() stored since (an insert
 * rolled back leaves its entry: a read checks the pair in the row it finds). put() is the table's only
 * writer. A key it lacks would replay nothing and create a second execution (IDEM-001, IDEM-008), so the
 * map is never smaller than the table.
 */
export class Receipts {
  private readonly seqs = new Map<string, Map<string, number>>()

  constructor(private readonly db: Db) {
    this.read()
    db.onWorldCleared(() => this.read())
  }

  /** The receipt of (Project, key) that still answers at nowMs (IDEM rules, RET-001, RET-002), if any. */
  live(projectId: string, key: string, nowMs: number): IdempotencyRecord | undefined {
    const stored = this.stored(projectId, key)
    if (!stored) return undefined
    const open = stored.execution_ref !== null && isExecutionOpen(this.db, stored.execution_ref)
    return receiptHolds(stored.expires_at, nowMs, open) ? stored : undefined
  }

  /** Stores a receipt (replacing the pair's previous one). */
  put(r: IdempotencyRecord): void {
    const seq = this.seqs.get(r.project_id)?.get(r.key)
    if (seq !== undefined && receiptAt(this.db, seq, r.project_id, r.key)) {
      replaceReceipt(this.db, seq, r)
      return
    }
    this.add(r.project_id, r.key, insertReceipt(this.db, r))
  }

  /** The receipt stored for (Project, key), whether it still answers or not. */
  private stored(projectId: string, key: string): IdempotencyRecord | undefined {
    const seq = this.seqs.get(projectId)?.get(key)
    return seq === undefined ? undefined : receiptAt(this.db, seq, projectId, key)
  }

  private read(): void {
    this.seqs.clear()
    const rows = this.db
      .stmt('SELECT project_id, key, seq FROM idempotency ORDER BY seq')
      .raw(true)
      .iterate() as Iterable<[string, string, number]>
    for (const [projectId, key, seq] of rows) this.add(projectId, key, seq)
  }

  private add(projectId: string, key: string, seq: number): void {
    const keys = this.seqs.get(projectId)
    if (keys) keys.set(key, seq)
    else this.seqs.set(projectId, new Map([[key, seq]]))
  }
}
