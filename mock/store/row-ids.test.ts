/**
 * Sessions and executions are found by id through a map in memory (mock/store/row-ids.ts). Whatever happens
 * to the tables (rows inserted and committed or rolled back, in a savepoint or not, rows deleted or inserted
 * by SQL of their own, resets committed or rolled back, a file store reopened), a read by id finds the row
 * stored with that id and nothing for any other id: a Session or Turn missed would answer 404 NOT_FOUND for a
 * created one (SES-001), one mistaken for another would show a caller someone else's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { Receipts } from './idempotency.js'
import { inTx, newExecution, TX_OUTCOMES, upgraded, type TxOutcome } from './test-stores.js'
import {
  getExecution,
  getSession,
  insertExecution,
  insertSession,
  isExecutionOpen,
  projectLoad,
  turnIdsOfSession,
  type ExecutionRecord,
  type SessionRecord,
} from './executions.js'

const dir = mkdtempSync(join(tmpdir(), 'row-ids-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const session = (id: string): SessionRecord => ({
  id,
  seq: 0,
  project_id: 'p',
  deployment_id: 'd',
  status: 'ACTIVE',
  deleted_at: null,
  metadata: {},
  created_at: 0,
  last_activity_at: 0,
  workflow_run_id: null,
})

const turn = (id: string, s: SessionRecord): ExecutionRecord =>
  newExecution({ id, deployment_id: 'd', session_id: s.id, session_seq: s.seq })

type Real = { db: Db; path: string }
/** The Sessions stored (committed) by id, with the ids of their Turns; every id ever used. */
type Model = { sessions: Map<string, string[]>; used: string[]; n: number }

/** A Session with one Turn stored in a transaction: committed, rolled back, or in a savepoint rolled back. */
class Create implements fc.Command<Model, Real> {
  constructor(readonly outcome: TxOutcome) {}
  check = () => true
  run(m: Model, r: Real): void {
    const n = ++m.n
    const s = session(`s${n}`)
    const t = turn(`t${n}`, s)
    m.used.push(s.id, t.id)
    inTx(r.db, this.outcome, () => {
      insertSession(r.db, s)
      t.session_seq = s.seq
      insertExecution(r.db, t)
    })
    if (this.outcome === 'commit') m.sessions.set(s.id, [t.id])
  }
  toString = () => `create(${this.outcome})`
}

/** A Session with one Turn written by SQL of its own (not through insertSession and insertExecution). */
class OtherInsert implements fc.Command<Model, Real> {
  check = () => true
  run(m: Model, r: Real): void {
    const n = ++m.n
    const [sid, tid] = [`s${n}`, `t${n}`]
    m.used.push(sid, tid)
    // Through db.stmt, as the store's own statements go (the reads it keeps are told of the write).
    const { lastInsertRowid } = r.db
      .stmt(
        `INSERT INTO sessions (id, project_id, deployment_id, status, metadata_json, created_at, last_activity_at)
         VALUES (?, 'p', 'd', 'ACTIVE', '{}', 0, 0)`,
      )
      .run(sid)
    r.db
      .stmt(
        `INSERT INTO executions (id, kind, project_id, api_key, session_id, session_seq, status, scenario,
           steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su, created_at)
         VALUES (?, 'TURN', 'p', 'k', ?, ?, 'QUEUED', 'succeed', '[]', 'null', '{}', 3600, 600, 1, 0)`,
      )
      .run(tid, sid, lastInsertRowid)
    m.sessions.set(sid, [tid])
  }
  toString = () => 'otherInsert'
}

/**
 * The oldest stored Session and its Turns deleted (their rows only). Not the newest: the mock deletes rows only
 * in a world reset, and a newest row deleted otherwise could have its seq taken again by a row that SQL of its
 * own stores, which the map would not see (row-ids.ts).
 */
class Delete implements fc.Command<Model, Real> {
  check = (m: Readonly<Model>) => m.sessions.size > 1
  run(m: Model, r: Real): void {
    const id = [...m.sessions.keys()][0]!
    r.db.stmt('DELETE FROM executions WHERE session_id = ?').run(id)
    r.db.stmt('DELETE FROM sessions WHERE id = ?').run(id)
    m.sessions.delete(id)
  }
  toString = () => 'delete(oldest)'
}

/** A reset (every world table emptied), committed or rolled back. */
class Reset implements fc.Command<Model, Real> {
  constructor(readonly commit: boolean) {}
  check = () => true
  run(m: Model, r: Real): void {
    try {
      r.db.tx(() => {
        r.db.clearWorld()
        if (!this.commit) throw new Error('rolled back')
      })
    } catch (error) {
      if ((error as Error).message !== 'rolled back') throw error
    }
    if (this.commit) m.sessions.clear()
  }
  toString = () => `reset(${this.commit ? 'commit' : 'rollback'})`
}

/** The process stops and the file store is opened again. */
class Reopen implements fc.Command<Model, Real> {
  check = () => true
  run(_m: Model, r: Real): void {
    r.db.close()
    r.db = openDb(r.path)
  }
  toString = () => 'reopen'
}

/** Every id ever used, and one never used, read back. */
class ReadAll implements fc.Command<Model, Real> {
  check = () => true
  run(m: Model, r: Real): void {
    for (const id of [...m.used, 'never']) {
      const turns = m.sessions.get(id)
      expect(getSession(r.db, id)?.id).toBe(turns ? id : undefined)
      expect(turnIdsOfSession(r.db, id)).toEqual(turns ?? [])
    }
    const stored = new Set([...m.sessions.values()].flat())
    for (const id of [...m.used.filter((u) => u.startsWith('t')), 'never']) {
      expect(getExecution(r.db, id)?.id).toBe(stored.has(id) ? id : undefined)
      expect(isExecutionOpen(r.db, id)).toBe(stored.has(id))
    }
  }
  toString = () => 'readAll'
}

const commands = (file: boolean) => [
  fc.constantFrom(...TX_OUTCOMES).map((o) => new Create(o)),
  fc.constant(new OtherInsert()),
  fc.constant(new Delete()),
  fc.boolean().map((c) => new Reset(c)),
  fc.constant(new ReadAll()),
  ...(file ? [fc.constant(new Reopen())] : []),
]

let stores = 0
for (const file of [false, true]) {
  it(`[SES-001] finds every stored Session and Turn by id and nothing else through creations, rollbacks, savepoints, deletes, other inserts and resets${file ? ', a file store reopened' : ''}`, () => {
    fc.assert(
      fc.property(fc.commands(commands(file), { maxCommands: 30 }), (cmds) => {
        const path = file ? join(dir, `s${stores++}.db`) : ':memory:'
        const real: Real = { db: openDb(path), path }
        try {
          const model: Model = { sessions: new Map(), used: [], n: 0 }
          fc.modelRun(() => ({ model, real }), cmds)
          new ReadAll().run(model, real)
        } finally {
          real.db.close()
        }
      }),
      { numRuns: file ? 30 : 120 },
    )
  })
}

it('[SES-001] reads a Session and a Turn by id without an index of ids: through their seq', () => {
  const db = openDb(':memory:')
  try {
    const plans = db.raw
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('sessions', 'executions')`,
      )
      .all() as { name: string }[]
    expect(plans.map((p) => p.name).sort()).toEqual([
      'executions_session',
      'executions_slots',
      'sessions_workflow_run',
    ])
    const s = session('s')
    db.tx(() => insertSession(db, s))
    const detail = (sql: string) =>
      (db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 's') as { detail: string }[])
        .map((r) => r.detail)
        .join(' | ')
    expect(detail('SELECT * FROM sessions WHERE seq = ? AND id = ?')).toMatch(
      /SEARCH sessions USING INTEGER PRIMARY KEY/,
    )
  } finally {
    db.close()
  }
})

it('[SES-001] [IDEM-001] keeps a kept store’s Sessions, Turns, their order, its load and its receipts through the upgrade (schemas 300, 310)', () => {
  upgraded(
    '300',
    (old) => {
      const session = old.raw.prepare(
        `INSERT INTO sessions (id, seq, project_id, deployment_id, status, metadata_json, created_at, last_activity_at)
         VALUES (?, ?, 'p', 'd', 'ACTIVE', '{}', 0, 0)`,
      )
      const execution = old.raw.prepare(
        `INSERT INTO executions (id, seq, kind, project_id, api_key, session_id, session_seq, status, scenario,
           steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su, created_at, admitted_at, terminal)
         VALUES (?, ?, 'TURN', 'p', 'k', ?, ?, 'QUEUED', 'succeed', '[]', 'null', '{}', 3600, 600, 1, 0, NULL, ?)`,
      )
      // Numbers with gaps (rows deleted since), one of each Session's Turns ended.
      session.run('s-a', 3)
      session.run('s-b', 7)
      execution.run('t-a1', 4, 's-a', 3, 1)
      execution.run('t-b1', 9, 's-b', 7, 0)
      execution.run('t-a2', 12, 's-a', 3, 0)
      old.raw
        .prepare(
          `INSERT INTO idempotency (project_id, key, operation_id, path, fingerprint, status, body_json, created_at, expires_at, execution_ref)
           VALUES ('p', 'k1', 'createSession', '/', 'f1', 202, '{}', 0, 9e15, 't-a2')`,
        )
        .run()
    },
    (db) => {
      expect(getSession(db, 's-a')?.seq).toBe(3)
      expect(getSession(db, 's-b')?.seq).toBe(7)
      expect(turnIdsOfSession(db, 's-a')).toEqual(['t-a1', 't-a2'])
      expect(turnIdsOfSession(db, 's-b')).toEqual(['t-b1'])
      expect(getExecution(db, 't-a2')?.seq).toBe(12)
      expect(isExecutionOpen(db, 't-a1')).toBe(false)
      expect(projectLoad(db, 'p')).toMatchObject({ open: 2, waiting: 2 })
      expect(new Receipts(db).live('p', 'k1', 0)?.fingerprint).toBe('f1')
      // New rows number on from the largest.
      const s = session('s-new')
      db.tx(() => insertSession(db, s))
      expect(s.seq).toBe(8)
      const indexes = db.raw
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('sessions', 'executions', 'idempotency')`,
        )
        .all() as { name: string }[]
      expect(indexes.map((i) => i.name).sort()).toEqual([
        'executions_session',
        'executions_slots',
        'sessions_workflow_run',
      ])
    },
  )
})
