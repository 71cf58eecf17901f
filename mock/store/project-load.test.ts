/**
 * A Project's load (store/project-load.ts, counted in memory): whatever is written to executions (by the
 * store's writers insertExecution and saveExecution, or by SQL of its own: inserts, status changes, admissions,
 * ends, deletes; committed, rolled back, in savepoints rolled back; resets), a Project's counts are what
 * counting its open executions now gives, and its max_su bound is never below what they hold in reserve.
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { inTx, newExecution, TX_OUTCOMES } from './test-stores.js'
import {
  getExecution,
  insertExecution,
  openReservations,
  projectLoad,
  saveExecution,
  type ExecutionRecord,
} from './executions.js'

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

it('[CONC-001] [CONC-002] [ERR-080] counts every Project’s open and waiting executions through any write of SQL of its own, and bounds their reservations', () => {
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

/** A new execution as acceptExecution stores it (QUEUED, not admitted). */
const fresh = (n: number, project: string, maxSu: number): ExecutionRecord =>
  newExecution({ id: `x${n}`, project_id: project, max_su: maxSu })

type StoreOp =
  | { kind: 'insert'; project: string; maxSu: number }
  | { kind: 'admit' | 'end' | 'start'; which: number }
  | { kind: 'reset' }
const storeOp: fc.Arbitrary<StoreOp> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    project: fc.constantFrom(...PROJECTS),
    maxSu: fc.constantFrom(0.1, 0.2, 1, 100, 1e-9),
  }),
  fc.record({
    kind: fc.constantFrom('admit' as const, 'end' as const, 'start' as const),
    which: fc.nat(20),
  }),
  fc.constant({ kind: 'reset' as const }),
)
const outcome = fc.constantFrom(...TX_OUTCOMES)

it('[CONC-001] [CONC-002] [ERR-080] counts every Project’s open and waiting executions through the store’s writers: committed, rolled back, in savepoints, across resets', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ op: storeOp, outcome }), { maxLength: 30 }), (ops) => {
      const db = openDb()
      let n = 0
      try {
        for (const { op, outcome } of ops) {
          const apply = () => {
            if (op.kind === 'insert') insertExecution(db, fresh(++n, op.project, op.maxSu))
            else if (op.kind === 'reset') db.clearWorld()
            else {
              const ids = db.raw.prepare('SELECT id FROM executions ORDER BY seq').all() as {
                id: string
              }[]
              if (ids.length === 0) return
              const e = getExecution(db, ids[op.which % ids.length]!.id)!
              if (op.kind === 'admit') e.admitted_at = 1
              else if (op.kind === 'start') e.status = 'RUNNING'
              else e.terminal = true
              saveExecution(db, e)
            }
            // Read inside the transaction too: what it reads must not outlive a rollback.
            expectCounted(db)
          }
          inTx(db, outcome, apply)
          expectCounted(db)
        }
      } finally {
        db.close()
      }
    }),
    { numRuns: 200 },
  )
})
