/**
 * Idempotency receipts: prepared statements and row mapping; found by (Project, key) through a map in memory.
 * A receipt is a row of idempotency, or carried by the row of the execution its request created (schema 330,
 * store/carried-receipts.ts).
 */
import { receiptHolds } from '../domain/retention.js'
import type { CarriedAnswer, Carrier } from './carried-receipts.js'
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

/**
 * A receipt as a lookup finds it: a row's answer is its stored text; a carried receipt's is rebuilt from its
 * execution (answer) by the caller.
 */
export type FoundReceipt = {
  fingerprint: string
  status: number
  expires_at: number
  body_json: string | null
  answer: CarriedAnswer | null
}

/** A carried receipt as its execution's row holds it. */
type CarriedRow = CarriedAnswer & {
  receipt_fingerprint: string
  receipt_expires_at: number
  terminal: number
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

/** The receipt an execution's row carries, if the row holds the pair's. */
function carriedAt(db: Db, seq: number, projectId: string, key: string): CarriedRow | undefined {
  return db
    .cached(
      `SELECT kind, id, session_id, receipt_fingerprint, receipt_expires_at, terminal FROM executions
       WHERE seq = ? AND project_id = ? AND receipt_key = ?`,
    )
    .get(seq, projectId, key) as CarriedRow | undefined
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
 * One instance's idempotency receipts, found through a map in memory: per Project and key, where the pair's
 * receipt is, the seq of its idempotency row or, for a receipt carried by an execution's row, that row's seq
 * negated. Most keyed requests carry a key never used before: a key the map lacks has no receipt, without
 * reading the store.
 *
 * The map holds every stored pair and may hold more: the receipts read from the store when the instance
 * starts and again after every committed world reset (Db.onWorldCleared), and every receipt put() stored since
 * (an insert rolled back leaves its entry: a read checks the pair in the row it finds). put() is the only
 * writer of receipts (a carried one is written by the execution's insert, offered by the route, and put()
 * then only notes it). A key it lacks would replay nothing and create a second execution (IDEM-001,
 * IDEM-008), so the map is never smaller than the store. A pair used again once its receipt stopped holding
 * gets a new receipt, in a row or another execution; the store may then hold the old one too, and a read of
 * the store keeps the newer (the later created_at; a row before a carried receipt of the same instant).
 */
export class Receipts {
  private readonly seqs = new Map<string, Map<string, number>>()

  constructor(private readonly db: Db) {
    this.read()
    db.onWorldCleared(() => this.read())
  }

  /** The receipt of (Project, key) that still answers at nowMs (IDEM rules, RET-001, RET-002), if any. */
  live(projectId: string, key: string, nowMs: number): FoundReceipt | undefined {
    const at = this.seqs.get(projectId)?.get(key)
    if (at === undefined) return undefined
    if (at < 0) {
      const c = carriedAt(this.db, -at, projectId, key)
      if (!c || !receiptHolds(c.receipt_expires_at, nowMs, c.terminal === 0)) return undefined
      return {
        fingerprint: c.receipt_fingerprint,
        status: 202,
        expires_at: c.receipt_expires_at,
        body_json: null,
        answer: { kind: c.kind, id: c.id, session_id: c.session_id },
      }
    }
    const stored = receiptAt(this.db, at, projectId, key)
    if (!stored) return undefined
    const open = stored.execution_ref !== null && isExecutionOpen(this.db, stored.execution_ref)
    if (!receiptHolds(stored.expires_at, nowMs, open)) return undefined
    return {
      fingerprint: stored.fingerprint,
      status: stored.status,
      expires_at: stored.expires_at,
      body_json: stored.body_json,
      answer: null,
    }
  }

  /**
   * Stores a receipt (replacing the pair's previous one): as a row, or, given the execution that carries it
   * (its insert wrote the key, fingerprint and expiry), by noting that row.
   */
  put(r: IdempotencyRecord, carrier?: Carrier): void {
    if (carrier) {
      this.add(r.project_id, r.key, -carrier.seq)
      return
    }
    const at = this.seqs.get(r.project_id)?.get(r.key)
    if (at !== undefined && at > 0 && receiptAt(this.db, at, r.project_id, r.key)) {
      replaceReceipt(this.db, at, r)
      return
    }
    this.add(r.project_id, r.key, insertReceipt(this.db, r))
  }

  private read(): void {
    this.seqs.clear()
    // Both kinds, oldest first, so that the newer receipt of a pair is the one kept (a row after a carried
    // receipt of the same instant: a row is only written for a pair whose carrier was not kept).
    const rows = this.db
      .stmt(
        `SELECT project_id AS p, key AS k, seq AS a, created_at AS t, 0 AS o FROM idempotency
         UNION ALL
         SELECT project_id, receipt_key, -seq, created_at, -1 FROM executions WHERE receipt_key IS NOT NULL
         ORDER BY t, o, a`,
      )
      .iterate() as Iterable<{ p: string; k: string; a: number }>
    for (const r of rows) this.add(r.p, r.k, r.a)
  }

  private add(projectId: string, key: string, at: number): void {
    const keys = this.seqs.get(projectId)
    if (keys) keys.set(key, at)
    else this.seqs.set(projectId, new Map([[key, at]]))
  }
}
