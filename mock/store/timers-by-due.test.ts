/**
 * Schema 260 stores timers in their firing order (mock/store/schema/260-timers-by-due.sql). A --db store made
 * before it keeps every pending timer through the upgrade (STATE-015: a deadline is not moved by a restart),
 * and the next due timer is read from the table's key, with no sort and no second lookup.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { packageFile } from '../../spec/index.js'
import { openDb } from './db.js'
import { firstDueTimer, getTimer, insertTimer, type TimerRow } from './timers.js'

const SCHEMA = packageFile('mock', 'store', 'schema')

/** A schema folder holding the migrations before `first` (a store made by an earlier version). */
function schemaBefore(first: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'schema-before-'))
  for (const f of readdirSync(SCHEMA).filter((f) => f.endsWith('.sql') && f < first))
    copyFileSync(join(SCHEMA, f), join(dir, f))
  return dir
}

const timer = fc.record({
  due_at: fc.integer({ min: 0, max: 50 }),
  kind: fc.constantFrom('webhook.attempt', 'execution.step', 'run.deadline'),
  payload: fc.string({ maxLength: 8 }),
  subject: fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: null }),
})

it('[STATE-015] keeps every pending timer through the upgrade to timers in firing order, and fires them in (due_at, seq) order', () => {
  fc.assert(
    fc.property(fc.array(timer, { maxLength: 30 }), (specs) => {
      const before = schemaBefore('260')
      const dir = mkdtempSync(join(tmpdir(), 'timers-upgrade-'))
      const path = join(dir, 'store.db')
      try {
        const rows: TimerRow[] = specs.map((t, i) => ({
          id: `t${i}`,
          due_at: t.due_at,
          seq: i + 1,
          kind: t.kind,
          payload_json: JSON.stringify(t.payload),
          subject: t.subject,
        }))
        const old = openDb(path, { schemaDir: before })
        for (const r of rows) insertTimer(old, r)
        old.close()

        const db = openDb(path)
        try {
          for (const r of rows) expect(getTimer(db, r.id)).toEqual(r)
          const order = [...rows].sort((a, b) => a.due_at - b.due_at || a.seq - b.seq)
          const fired: string[] = []
          for (let t = firstDueTimer(db, 50); t; t = firstDueTimer(db, 50)) {
            fired.push(t.id)
            db.stmt('DELETE FROM timers WHERE id = ?').run(t.id)
          }
          expect(fired).toEqual(order.map((r) => r.id))
        } finally {
          db.close()
        }
      } finally {
        rmSync(before, { recursive: true, force: true })
        rmSync(dir, { recursive: true, force: true })
      }
    }),
    { numRuns: 25 },
  )
})

it('[STATE-015] reads the next due timer from the table key: no sort, no lookup in a second b-tree', () => {
  const db = openDb()
  try {
    const plan = (sql: string) =>
      (db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0) as { detail: string }[])
        .map((r) => r.detail)
        .join('; ')
    const next = plan('SELECT * FROM timers WHERE due_at <= ? ORDER BY due_at, seq LIMIT 1')
    expect(next).toMatch(/SEARCH timers USING PRIMARY KEY \(due_at<\?\)/)
    expect(next).not.toMatch(/TEMP B-TREE/)
    const indexes = db.raw
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'timers'")
      .all() as { name: string }[]
    // The id (UNIQUE) and the subject: with the table itself, 3 b-trees written per timer.
    expect(indexes).toHaveLength(2)
  } finally {
    db.close()
  }
})
