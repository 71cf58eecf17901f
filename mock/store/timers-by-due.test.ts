/**
 * Schema 260 stores timers in their firing order (mock/store/schema/260-timers-by-due.sql). A --db store made
 * before it keeps every pending timer through the upgrade (STATE-015: a deadline is not moved by a restart),
 * and the next due timer is read from the table's key, with no sort and no second lookup.
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { openDb } from './db.js'
import { upgraded } from './test-stores.js'
import { deleteTimer, firstDueTimer, getTimer, insertTimer, type TimerRow } from './timers.js'

/** Timer rows of generated specs, seq 1, 2, … in order, named by `idOf`. */
type TimerSpec = { due_at: number; kind: string; payload: string; subject: string | null }

const rowsOf = (specs: TimerSpec[], idOf: (i: number) => string): TimerRow[] =>
  specs.map((t, i) => ({
    id: idOf(i),
    due_at: t.due_at,
    seq: i + 1,
    kind: t.kind,
    payload_json: JSON.stringify(t.payload),
    subject: t.subject,
  }))

const timer = fc.record({
  due_at: fc.integer({ min: 0, max: 50 }),
  kind: fc.constantFrom('webhook.attempt', 'execution.step', 'run.deadline'),
  payload: fc.string({ maxLength: 8 }),
  subject: fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: null }),
})

it('[STATE-015] keeps every pending timer through the upgrade to timers in firing order, and fires them in (due_at, seq) order', () => {
  fc.assert(
    fc.property(fc.array(timer, { maxLength: 30 }), (specs) => {
      const rows = rowsOf(specs, (i) => `t${i}`)
      upgraded(
        '260',
        (old) => rows.forEach((r) => insertTimer(old, r)),
        (db) => {
          // Schema 270 then names each timer by its key.
          const keyed = rows.map((r) => ({ ...r, id: `${r.due_at}.${r.seq}` }))
          for (const r of keyed) expect(getTimer(db, r.id)).toEqual(r)
          const order = [...keyed].sort((x, y) => x.due_at - y.due_at || x.seq - y.seq)
          const fired: string[] = []
          for (let t = firstDueTimer(db, 50); t; t = firstDueTimer(db, 50)) {
            fired.push(t.id)
            expect(deleteTimer(db, t.id)).toBe(true)
          }
          expect(fired).toEqual(order.map((r) => r.id))
        },
      )
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
    // The subject only (schema 270: the id is the key): with the table itself, 2 b-trees written per timer.
    expect(indexes.map((i) => i.name)).toEqual(['timers_subject'])
  } finally {
    db.close()
  }
})

it('[STATE-015] names each pending timer by its key through the upgrade to keyed ids (schema 270), and a webhook delivery follows its timer', () => {
  fc.assert(
    fc.property(
      fc.array(timer, { maxLength: 20 }),
      fc.array(fc.nat(30), { maxLength: 6 }),
      (specs, named) => {
        const rows = rowsOf(specs, (i) => `aaaaaaaa-0000-4000-8000-${String(i).padStart(12, '0')}`)
        upgraded(
          '270',
          (old) => {
            for (const r of rows) insertTimer(old, r)
            // Deliveries naming a pending timer (an index in rows) or one no longer pending (beyond them).
            named.forEach((n, i) =>
              old
                .stmt(
                  `INSERT INTO webhook_deliveries (id, seq, project_id, endpoint_id, event_id, event_type, body, status, next_timer_id, created_at)
                   VALUES (?, ?, 'p', 'e', ?, 'turn.completed', '{}', 'PENDING', ?, 0)`,
                )
                .run(`d${i}`, i + 1, `ev${i}`, rows[n]?.id ?? `gone-${n}`),
            )
          },
          (db) => {
            for (const r of rows) {
              const id = `${r.due_at}.${r.seq}`
              expect(getTimer(db, id)).toEqual({ ...r, id })
              expect(getTimer(db, r.id)).toBeUndefined()
            }
            named.forEach((n, i) => {
              const r = rows[n]
              const { next_timer_id } = db
                .stmt('SELECT next_timer_id FROM webhook_deliveries WHERE id = ?')
                .get(`d${i}`) as { next_timer_id: string | null }
              expect(next_timer_id).toBe(r ? `${r.due_at}.${r.seq}` : null)
              if (r) expect(getTimer(db, next_timer_id!)).toBeDefined()
            })
            for (const r of rows) expect(deleteTimer(db, `${r.due_at}.${r.seq}`)).toBe(true)
            expect(db.stmt('SELECT COUNT(*) AS n FROM timers').get()).toEqual({ n: 0 })
          },
        )
      },
    ),
    { numRuns: 20 },
  )
})

it('finds no timer for a string that is not a timer id, and deletes none', () => {
  const db = openDb()
  try {
    insertTimer(db, {
      id: '5.1',
      due_at: 5,
      seq: 1,
      kind: 'k',
      payload_json: 'null',
      subject: null,
    })
    for (const id of ['', '5', '5.', '.1', '5.1.1', 'x5.1', '5.1 ', '0x5.1', '5.-1'])
      expect([getTimer(db, id), deleteTimer(db, id)]).toEqual([undefined, false])
    expect(getTimer(db, '5.1')?.seq).toBe(1)
  } finally {
    db.close()
  }
})
