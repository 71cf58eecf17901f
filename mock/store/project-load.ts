/**
 * A Project's open (not terminal) executions, counted in memory: how many, how many wait for a slot (the
 * waiting cap), and an upper bound of what they hold in reserve (the sum of their max_su in millionths rounded
 * up), which settles most acceptances without summing them (execution/accept.ts reserveSu). Schema 240 kept
 * these counts in a table by triggers on every write of an execution; an acceptance then wrote that table's
 * row as well as the execution's (schema 320-project-load-in-memory.sql).
 *
 * The counts follow the two writers of executions, insertExecution and saveExecution (store/executions.ts),
 * which tell them each execution's part before and after. They are counted again from the table:
 * - every Project's, on first use on a connection, after a committed world reset (Db.onWorldCleared), and
 *   when the table was written by anything else (its write generation moved: a test's SQL, say);
 * - a Project's, after a transaction or savepoint that wrote its executions rolls back (Db.onRollback): a write
 *   undone leaves the counts it moved wrong until then; every Project's, after one that counted from the table.
 * An execution's Project never changes.
 */
import type { Db } from './db.js'

/** What the counts say of a Project (maxSuBound in SU; Infinity when the sum is past exact integers). */
export type ProjectLoad = { open: number; waiting: number; maxSuBound: number }

/** One open execution's part: whether it waits, and its max_su in millionths rounded up. */
type Part = { waiting: boolean; micro: number }

type Counts = { open: number; waiting: number; micro: number; parts: Map<number, Part> }

/** The part of an execution (by seq) as its record says, undefined once it ended. */
export type ExecutionPart = {
  seq: number
  project_id: string
  terminal: boolean
  admitted_at: number | null
  max_su: number
}

const NONE: ProjectLoad = Object.freeze({ open: 0, waiting: 0, maxSuBound: 0 })

/** max_su in millionths, rounded up (as schema 240 counted it). */
const microOf = (maxSu: number): number => Math.trunc(maxSu * 1_000_000) + 1

export class ProjectLoads {
  private readonly counts = new Map<string, Counts>()
  /** The table's write generation the counts are exact at (every Project's); -1: count them all again. */
  private validAt = -1
  private readonly generation: () => number
  /** Projects whose executions the running transaction wrote (counted again if it rolls back). */
  private readonly touched = new Set<string>()
  /** Projects to count again before their next use. */
  private readonly stale = new Set<string>()
  /** Whether the running transaction counted from the table (what it read may be rolled back). */
  private countedInTx = false

  constructor(private readonly db: Db) {
    this.generation = db.generationOf('executions')
    db.onWorldCleared(() => {
      this.validAt = -1
    })
    db.onRollback(() => {
      for (const p of this.touched) this.stale.add(p)
      this.touched.clear()
      if (this.countedInTx) this.validAt = -1
      this.countedInTx = false
    })
  }

  /** A Project's counts now. */
  of(projectId: string): ProjectLoad {
    const c = this.current(projectId)
    if (!c) return NONE
    // A sum past 2^53 millionths bounds nothing exactly.
    const maxSuBound = Number.isSafeInteger(c.micro) ? c.micro / 1e6 : Infinity
    return { open: c.open, waiting: c.waiting, maxSuBound }
  }

  /**
   * Runs write, a statement that stores e as it is now (inserted, or saved over its row), and moves e's
   * Project's counts from e's part before to its part now.
   */
  write(e: ExecutionPart, write: () => void): void {
    const c = this.current(e.project_id) ?? this.empty(e.project_id)
    const before = this.generation()
    write()
    if (this.validAt === before) this.validAt = this.generation()
    if (!this.touched.has(e.project_id)) {
      this.touched.add(e.project_id)
      if (this.touched.size === 1) this.db.afterCommit(() => this.touched.clear())
    }
    const was = c.parts.get(e.seq)
    if (was) {
      c.parts.delete(e.seq)
      c.open--
      if (was.waiting) c.waiting--
      c.micro -= was.micro
    }
    if (!e.terminal) {
      const part = { waiting: e.admitted_at === null, micro: was?.micro ?? microOf(e.max_su) }
      c.parts.set(e.seq, part)
      c.open++
      if (part.waiting) c.waiting++
      c.micro += part.micro
    }
  }

  /** The Project's counts, counted again first if they may be wrong; undefined: no open execution. */
  private current(projectId: string): Counts | undefined {
    const generation = this.generation()
    if (generation !== this.validAt) {
      this.countAll()
      this.validAt = generation
    } else if (this.stale.has(projectId)) {
      this.stale.delete(projectId)
      this.countProject(projectId)
    }
    return this.counts.get(projectId)
  }

  private empty(projectId: string): Counts {
    const c: Counts = { open: 0, waiting: 0, micro: 0, parts: new Map() }
    this.counts.set(projectId, c)
    return c
  }

  /** Notes a count from the table inside a transaction. */
  private counting(): void {
    if (!this.db.raw.inTransaction || this.countedInTx) return
    this.countedInTx = true
    this.db.afterCommit(() => {
      this.countedInTx = false
    })
  }

  private countAll(): void {
    this.counting()
    this.counts.clear()
    this.stale.clear()
    const rows = this.db
      .stmt(
        `SELECT project_id AS p, seq AS s, admitted_at IS NULL AS w, CAST(max_su * 1000000 AS INTEGER) + 1 AS m
         FROM executions WHERE terminal = 0`,
      )
      .iterate() as Iterable<{ p: string; s: number; w: number; m: number }>
    for (const r of rows) this.add(this.counts.get(r.p) ?? this.empty(r.p), r.s, r.w === 1, r.m)
  }

  private countProject(projectId: string): void {
    this.counting()
    const c = this.empty(projectId)
    const rows = this.db
      .stmt(
        `SELECT seq AS s, admitted_at IS NULL AS w, CAST(max_su * 1000000 AS INTEGER) + 1 AS m
         FROM executions WHERE project_id = ? AND terminal = 0`,
      )
      .iterate(projectId) as Iterable<{ s: number; w: number; m: number }>
    for (const r of rows) this.add(c, r.s, r.w === 1, r.m)
  }

  private add(c: Counts, seq: number, waiting: boolean, micro: number): void {
    c.parts.set(seq, { waiting, micro })
    c.open++
    if (waiting) c.waiting++
    c.micro += micro
  }
}

const make = (db: Db) => new ProjectLoads(db)

/** This connection's counts. */
export const projectLoads = (db: Db): ProjectLoads => db.own('project-loads', make)
