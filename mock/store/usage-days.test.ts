/**
 * usage_days (schema 255-usage-days.sql): whatever is written to the SU ledger (inserts, updates, deletes,
 * writes rolled back, the world cleared), each Project's day row holds exactly the integer bound the ledger's
 * rows of that UTC day give, never below what they settled; and the budget check's bounds read a day row and
 * the month's day rows, not the ledger, so its cost does not grow with what a month settled [BUD-003]
 * [BUD-004] [BUD-005].
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { budgetSpend, settledBounds } from './usage.js'

const DAY = 86_400_000
const PROJECTS = ['p1', 'p2']
/** Instants on three UTC days of one month (2026-11-29 .. 2026-12-01) and the edges between them. */
const BASE = Date.UTC(2026, 10, 29)
const instant = fc.oneof(
  fc.integer({ min: BASE, max: BASE + 3 * DAY - 1 }),
  fc.constantFrom(BASE, BASE + DAY - 1, BASE + DAY, BASE + 2 * DAY - 1, BASE + 2 * DAY),
)
const su = fc.oneof(
  fc.double({ min: 0, max: 1000, noNaN: true }),
  fc.constantFrom(0, 1e-7, 0.1, 0.2, 0.3, 0.999999, 1, 999.9999995),
)

const insert = fc.record({
  kind: fc.constant('insert' as const),
  project: fc.constantFrom(...PROJECTS),
  su,
  at: instant,
})
const update = fc.record({
  kind: fc.constant('update' as const),
  seq: fc.integer({ min: 1, max: 12 }),
  set: fc.oneof(
    su.map((v) => ({ column: 'su', value: v as number | string })),
    instant.map((v) => ({ column: 'settled_at', value: v as number | string })),
    fc
      .constantFrom(...PROJECTS)
      .map((v) => ({ column: 'project_id', value: v as number | string })),
  ),
})
const remove = fc.record({
  kind: fc.constant('delete' as const),
  seq: fc.integer({ min: 1, max: 12 }),
})
type Write =
  | { kind: 'insert'; project: string; su: number; at: number }
  | { kind: 'update'; seq: number; set: { column: string; value: number | string } }
  | { kind: 'delete'; seq: number }
const op = fc.record({ write: fc.oneof(insert, update, remove), rolledBack: fc.boolean() })

function write(db: Db, w: Write): void {
  if (w.kind === 'insert')
    db.stmt(
      "INSERT INTO usage_ledger (project_id, category, su, settled_at) VALUES (?, 'model', ?, ?)",
    ).run(w.project, w.su, w.at)
  else if (w.kind === 'update')
    db.stmt(`UPDATE usage_ledger SET ${w.set.column} = ? WHERE seq = ?`).run(w.set.value, w.seq)
  else db.stmt('DELETE FROM usage_ledger WHERE seq = ?').run(w.seq)
}

function expectDaysKept(db: Db): void {
  const kept = db.raw
    .prepare('SELECT project_id, day, su_micro FROM usage_days WHERE su_micro != 0 ORDER BY 1, 2')
    .all()
  const recounted = db.raw
    .prepare(
      `SELECT project_id, settled_at / ${DAY} AS day, SUM(CAST(su * 1000000 AS INTEGER) + 1) AS su_micro
       FROM usage_ledger GROUP BY 1, 2 ORDER BY 1, 2`,
    )
    .all()
  expect(kept).toEqual(recounted)
  for (const project of PROJECTS)
    for (let d = 0; d < 3; d++) {
      const day = { startMs: BASE + d * DAY, endMs: BASE + (d + 1) * DAY }
      const month = { startMs: Date.UTC(2026, 10, 1), endMs: Date.UTC(2026, 11, 1) }
      const bounds = settledBounds(db, project, day, month)
      const exact = budgetSpend(db, project, day, month)
      expect(bounds.dayBoundSu).toBeGreaterThanOrEqual(exact.daySu)
      expect(bounds.monthBoundSu).toBeGreaterThanOrEqual(exact.monthSu)
    }
}

it('keeps every Project’s daily bound of the ledger through any write [BUD-003] [BUD-004] [BUD-005]', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
      const db = openDb()
      try {
        for (const o of ops) {
          if (o.rolledBack)
            expect(() =>
              db.tx(() => {
                write(db, o.write)
                throw new Error('roll back')
              }),
            ).toThrow('roll back')
          else db.tx(() => write(db, o.write))
          expectDaysKept(db)
        }
        db.tx(() => db.clearWorld())
        expectDaysKept(db)
      } finally {
        db.close()
      }
    }),
    { numRuns: 200 },
  )
})

it('reads the bounds from day rows, never from the ledger [BUD-003] [BUD-004]', () => {
  const db = openDb()
  try {
    const traced: string[] = []
    const stmt = db.stmt.bind(db)
    ;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
      traced.push(sql)
      return stmt(sql)
    }
    settledBounds(
      db,
      'p1',
      { startMs: BASE, endMs: BASE + DAY },
      { startMs: BASE, endMs: BASE + 3 * DAY },
    )
    expect(traced).toHaveLength(1)
    const plan = (
      db.raw.prepare(`EXPLAIN QUERY PLAN ${traced[0]}`).all('p', 1, 'p', 1, 2) as {
        detail: string
      }[]
    ).map((r) => r.detail)
    // SCAN CONSTANT ROW: the one row a SELECT without FROM gives, not a table's.
    expect(plan.join(' | ')).not.toMatch(/usage_ledger|\bSCAN\b(?! CONSTANT ROW)/)
    expect(plan.join(' | ')).toMatch(/SEARCH usage_days USING PRIMARY KEY/)
  } finally {
    db.close()
  }
})
