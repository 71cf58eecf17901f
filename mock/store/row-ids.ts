/**
 * Sessions and executions by id, through a map in memory from id to seq (the row's INTEGER PRIMARY KEY).
 *
 * Their ids are random (UUIDs): an index of them in the store put every new row at a random place of it, a
 * page written (and its cache lines) on every creation (schema 300-ids-in-memory.sql; README, Benchmarks).
 * The map costs a hash per lookup and about 90 bytes per row.
 *
 * It holds every id of the table and may hold more: the ids stored through add() (insertSession,
 * insertExecution, the only writers of new rows), those read from the table when it is made (the first use
 * on a connection) and again after every committed world reset (Db.onWorldCleared). An insert rolled back,
 * or a row deleted, leaves its entry: a read by id checks the id in the row it finds (`WHERE seq = ? AND
 * id = ?`). An id the map lacks is looked for among the rows stored since the table was last read (rows
 * written by other means, such as a test's SQL, are found so) before it counts as unknown: one read of the
 * table's largest seq, and each row is read once. The mock deletes rows only in a world reset; a table's
 * newest row deleted otherwise would let a row stored by other means take its seq again, unseen.
 */
import type { Db } from './db.js'

export type IdTable = 'sessions' | 'executions'

export class RowIds {
  private readonly seqs = new Map<string, number>()
  /** Every committed row up to this seq was read from the table (rows above it were added, or are unknown). */
  private readUpTo = 0

  constructor(
    private readonly db: Db,
    private readonly table: IdTable,
  ) {
    this.readSince(0)
    db.onWorldCleared(() => {
      this.seqs.clear()
      this.readUpTo = 0
      this.readSince(0)
    })
  }

  /** The seq of the row holding id, if the table may hold it (the caller checks the id in the row). */
  seqOf(id: string): number | undefined {
    const seq = this.seqs.get(id)
    if (seq !== undefined) return seq
    // Rows stored since the last read, other than through add(): read once (amortised: each row once).
    const top = this.db.stmt(`SELECT MAX(seq) AS n FROM ${this.table}`).get() as {
      n: number | null
    }
    if ((top.n ?? 0) > this.readUpTo) this.readSince(this.readUpTo)
    return this.seqs.get(id)
  }

  /** A row just inserted with this id and seq. */
  add(id: string, seq: number): void {
    this.seqs.set(id, seq)
  }

  private readSince(after: number): void {
    const rows = this.db
      .stmt(`SELECT id, seq FROM ${this.table} WHERE seq > ? ORDER BY seq`)
      .raw(true)
      .iterate(after) as Iterable<[string, number]>
    let upTo = after
    for (const [id, seq] of rows) {
      this.seqs.set(id, seq)
      upTo = seq
    }
    // Rows read inside a transaction may be rolled back (and their seqs taken again by other rows): the read
    // counts once they are committed.
    this.db.afterCommit(() => {
      if (upTo > this.readUpTo) this.readUpTo = upTo
    })
  }
}

const sessionIds = (db: Db) => new RowIds(db, 'sessions')
const executionIds = (db: Db) => new RowIds(db, 'executions')

/** This connection's map of Session ids. */
export const sessionRows = (db: Db): RowIds => db.own('row-ids:sessions', sessionIds)
/** This connection's map of execution ids. */
export const executionRows = (db: Db): RowIds => db.own('row-ids:executions', executionIds)
