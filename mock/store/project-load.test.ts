/**
 * project_load (schema 240-project-load.sql): whatever is written to executions (inserts, status changes,
 * admissions, ends, deletes, writes rolled back), a Project's counts are what counting its open executions
 * now gives, and its max_su bound is never below what they hold in reserve.
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { openReservations, projectLoad } from './executions.js'

const PROJECTS = ['p1', 'p2']
const IDS = ['e1', 'e2', 'e3', 'e4']

const insert = fc.record({
  kind: fc.constant('insert' as const),
  id: fc.constantFrom(...IDS),
  project: fc.constantFrom(...PROJECTS),
  terminal: fc.boolean(),
  admitted: fc.boolean(),
  maxSu: fc.oneof(
    fc.double({ min: 1e-9, max: 100, noNaN: true }),
    fc.constantFrom(0.1, 0.2, 1, 100),
  ),
})
const update = fc.record({
  kind: fc.constant('update' as const),
  id: fc.constantFrom(...IDS),
  set: fc.constantFrom(
    'terminal = 1',
    'terminal = 0',
    'admitted_at = 5',
    'admitted_at = NULL',
    'max_su = max_su / 3',
    "project_id = 'p1'",
    "project_id = 'p2'",
    'spent_su = max_su / 2',
    "status = 'RUNNING'",
    'terminal = 1, admitted_at = 7',
  ),
})
const remove = fc.record({ kind: fc.constant('delete' as const), id: fc.constantFrom(...IDS) })
const op = fc.record({ write: fc.oneof(insert, update, remove), rolledBack: fc.boolean() })

function write(db: Db, w: OpWrite): void {
  if (w.kind === 'insert') {
    // Ids are unique (the mock makes them; no index of the store enforces it: 300-ids-in-memory.sql).
    db.stmt(
      `INSERT INTO executions (id, kind, project_id, api_key, status, scenario, steps_json, input_json,
         metadata_json, execution_seconds, queue_seconds, max_su, created_at, admitted_at, terminal)
       SELECT ?, 'TURN', ?, 'k', 'QUEUED', 's', '[]', 'null', '{}', 60, 60, ?, 0, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM executions WHERE id = ?)`,
    ).run(w.id, w.project, w.maxSu, w.admitted ? 1 : null, w.terminal ? 1 : 0, w.id)
  } else if (w.kind === 'update') {
    db.stmt(`UPDATE executions SET ${w.set} WHERE id = ?`).run(w.id)
  } else {
    db.stmt('DELETE FROM executions WHERE id = ?').run(w.id)
  }
}
type OpWrite =
  | {
      kind: 'insert'
      id: string
      project: string
      terminal: boolean
      admitted: boolean
      maxSu: number
    }
  | { kind: 'update'; id: string; set: string }
  | { kind: 'delete'; id: string }

function expectCounted(db: Db): void {
  for (const project of PROJECTS) {
    const counted = db.raw
      .prepare(
        `SELECT COUNT(*) AS open, COALESCE(SUM(admitted_at IS NULL), 0) AS waiting
         FROM executions WHERE project_id = ? AND terminal = 0`,
      )
      .get(project) as { open: number; waiting: number }
    const load = projectLoad(db, project)
    expect({ open: load.open, waiting: load.waiting }).toEqual(counted)
    expect(load.maxSuBound).toBeGreaterThanOrEqual(openReservations(db, project))
  }
}

it('counts every Project’s open and waiting executions through any write, and bounds their reservations', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
      const db = openDb()
      try {
        for (const o of ops) {
          if (o.rolledBack) {
            expect(() =>
              db.tx(() => {
                write(db, o.write)
                expectCounted(db)
                throw new Error('roll back')
              }),
            ).toThrow('roll back')
          } else db.tx(() => write(db, o.write))
          expectCounted(db)
        }
        db.tx(() => db.clearWorld())
        expectCounted(db)
      } finally {
        db.close()
      }
    }),
    { numRuns: 200 },
  )
})
