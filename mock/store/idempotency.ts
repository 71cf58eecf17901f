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

function getIdempotency(db: Db, projectId: string, key: string): IdempotencyRecord | undefined {
  return db
    .cached('SELECT * FROM idempotency WHERE project_id = ? AND key = ?')
    .get(projectId, key) as IdempotencyRecord | undefined
}

function putIdempotency(db: Db, r: IdempotencyRecord): void {
  db.stmt(
    `INSERT OR REPLACE INTO idempotency (project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at, execution_ref)
     VALUES (@project_id, @key, @operation_id, @path, @fingerprint, @status, @body_json, @created_at, @expires_at, @execution_ref)`,
  ).run(r)
}

/**
 * One instance's idempotency receipts. Most keyed requests carry a key never used before, so the receipts
 * keep in memory, per Project, every key that may have a receipt: a superset of the stored pairs, so that a
 * key outside it is known to have none without reading the store (a false "may have" only costs the read; a
 * false "has none" would replay nothing and create twice, so the set is never smaller than the table).
 *
 * The set holds the keys of the table as read once (on first use, and again whenever the table was written
 * other than by put(), e.g. emptied by a reset: its write generation moved) plus every key put() stored since.
 * Rows removed by a rolled-back transaction or a delete leave their keys in it, which keeps it a superset.
 * It is read again only outside a transaction, so that it never mirrors rows a rollback could bring back;
 * inside one, a stale set answers "may have" (the store is read).
 */
export class Receipts {
  private readonly keys = new Map<string, Set<string>>()
  /** The table's write generation at which `keys` held every stored pair; -1 before the first read. */
  private validAt = -1
  private readonly generation: () => number

  constructor(private readonly db: Db) {
    this.generation = db.generationOf('idempotency')
  }

  /** The receipt of (Project, key) that still answers at nowMs (IDEM rules, RET-001, RET-002), if any. */
  live(projectId: string, key: string, nowMs: number): IdempotencyRecord | undefined {
    if (!this.mayHave(projectId, key)) return undefined
    const stored = getIdempotency(this.db, projectId, key)
    if (!stored) return undefined
    const open = stored.execution_ref !== null && isExecutionOpen(this.db, stored.execution_ref)
    return receiptHolds(stored.expires_at, nowMs, open) ? stored : undefined
  }

  /** Stores a receipt (replacing the pair's previous one). */
  put(r: IdempotencyRecord): void {
    const before = this.generation()
    this.add(r.project_id, r.key)
    putIdempotency(this.db, r)
    // Nothing else wrote the table since the set held it all: with this put's key added, it still does.
    if (this.validAt === before) this.validAt = this.generation()
  }

  /** False only when (Project, key) has no stored receipt. */
  private mayHave(projectId: string, key: string): boolean {
    const generation = this.generation()
    if (generation !== this.validAt) {
      if (this.db.raw.inTransaction) return true
      this.reread(generation)
    }
    return this.keys.get(projectId)?.has(key) ?? false
  }

  private reread(generation: number): void {
    this.keys.clear()
    const rows = this.db
      .stmt('SELECT project_id, key FROM idempotency')
      .raw(true)
      .iterate() as Iterable<[string, string]>
    for (const [projectId, key] of rows) this.add(projectId, key)
    this.validAt = generation
  }

  private add(projectId: string, key: string): void {
    const keys = this.keys.get(projectId)
    if (keys) keys.add(key)
    else this.keys.set(projectId, new Set([key]))
  }
}
