/**
 * Receipts (mock/store/idempotency.ts) find a receipt through a map in memory from (Project, key) to the seq
 * of its row, and answer a key never used without reading the store. Whatever happens to the table (receipts
 * put and committed or rolled back, in a savepoint or not, replaced, resets committed or rolled back, lookups
 * inside a transaction that emptied it, a file store reopened), every stored receipt is found and no other:
 * a key it misses would replay nothing and create a second execution (IDEM-001, IDEM-008).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { Receipts, type IdempotencyRecord } from './idempotency.js'
import { inTx, TX_OUTCOMES, type TxOutcome } from './test-stores.js'

const PROJECTS = ['p1', 'p2']
const KEYS = ['k1', 'k2', 'k3']
const FAR = 4_000_000_000_000

const dir = mkdtempSync(join(tmpdir(), 'receipts-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const receipt = (projectId: string, key: string, n: number): IdempotencyRecord => ({
  project_id: projectId,
  key,
  operation_id: 'createSession',
  path: '/v1/deployments/d/sessions',
  fingerprint: `f${n}`,
  status: 202,
  body_json: JSON.stringify({ n }),
  created_at: n,
  expires_at: FAR,
  execution_ref: null,
})

/** The stores under test: the store itself, its receipts, and how to reopen it (a file store only). */
type Real = { db: Db; receipts: Receipts; path: string }
/** The pairs stored (committed), with the fingerprint of each pair's receipt. */
type Model = { stored: Map<string, string>; n: number }
const pair = (p: string, k: string) => `${p}\0${k}`

/** The receipt the store holds for a pair, read from the table itself. */
const storedRow = (db: Db, p: string, k: string) =>
  db.raw
    .prepare('SELECT fingerprint FROM idempotency WHERE project_id = ? AND key = ?')
    .get(p, k) as { fingerprint: string } | undefined

/** A lookup: the receipt found is the one stored (none when none is). */
class Lookup implements fc.Command<Model, Real> {
  constructor(
    readonly p: string,
    readonly k: string,
  ) {}
  check = () => true
  run(m: Model, r: Real): void {
    const found = r.receipts.live(this.p, this.k, 0)
    expect(found?.fingerprint).toBe(m.stored.get(pair(this.p, this.k)))
    expect(storedRow(r.db, this.p, this.k)?.fingerprint).toBe(m.stored.get(pair(this.p, this.k)))
  }
  toString = () => `lookup(${this.p},${this.k})`
}

/** put() in a transaction that commits, rolls back, or commits around a savepoint that rolls back. */
class Put implements fc.Command<Model, Real> {
  constructor(
    readonly p: string,
    readonly k: string,
    readonly outcome: TxOutcome,
  ) {}
  check = () => true
  run(m: Model, r: Real): void {
    const n = ++m.n
    inTx(r.db, this.outcome, () => r.receipts.put(receipt(this.p, this.k, n)))
    if (this.outcome === 'commit') m.stored.set(pair(this.p, this.k), `f${n}`)
  }
  toString = () => `put(${this.p},${this.k},${this.outcome})`
}

/**
 * A reset (every world table emptied), committed or rolled back; a rolled-back one looks a key up after
 * emptying the table, inside its transaction (a set read there would miss the rows the rollback restores).
 */
class Reset implements fc.Command<Model, Real> {
  constructor(
    readonly commit: boolean,
    readonly p: string,
    readonly k: string,
  ) {}
  check = () => true
  run(m: Model, r: Real): void {
    try {
      r.db.tx(() => {
        r.db.clearWorld()
        expect(r.receipts.live(this.p, this.k, 0)).toBeUndefined()
        if (!this.commit) throw new Error('rolled back')
      })
    } catch (error) {
      if ((error as Error).message !== 'rolled back') throw error
    }
    if (this.commit) m.stored.clear()
  }
  toString = () => `reset(${this.commit ? 'commit' : `rollback, looked up ${this.p},${this.k}`})`
}

/** The process stops and the file store is opened again: a new instance's receipts. */
class Reopen implements fc.Command<Model, Real> {
  check = () => true
  run(_m: Model, r: Real): void {
    r.db.close()
    r.db = openDb(r.path)
    r.receipts = new Receipts(r.db)
  }
  toString = () => 'reopen'
}

const project = fc.constantFrom(...PROJECTS)
const key = fc.constantFrom(...KEYS)
const commands = (file: boolean) => [
  fc.tuple(project, key).map(([p, k]) => new Lookup(p, k)),
  fc.tuple(project, key).map(([p, k]) => new Lookup(p, k)),
  fc.tuple(project, key, fc.constantFrom(...TX_OUTCOMES)).map(([p, k, o]) => new Put(p, k, o)),
  fc.tuple(fc.boolean(), project, key).map(([c, p, k]) => new Reset(c, p, k)),
  ...(file ? [fc.constant(new Reopen())] : []),
]

let stores = 0
for (const file of [false, true]) {
  it(`[IDEM-001] [IDEM-008] finds every stored receipt and no other through puts, rollbacks, savepoints and resets${file ? ', a file store reopened' : ''}`, () => {
    fc.assert(
      fc.property(fc.commands(commands(file), { maxCommands: 40 }), (cmds) => {
        const path = file ? join(dir, `s${stores++}.db`) : ':memory:'
        const db = openDb(path)
        const real: Real = { db, receipts: new Receipts(db), path }
        try {
          fc.modelRun(() => ({ model: { stored: new Map(), n: 0 }, real }), cmds)
          // Every pair, at the end: what the table holds is found, and the table holds one row per pair.
          for (const p of PROJECTS)
            for (const k of KEYS)
              expect(real.receipts.live(p, k, 0)?.fingerprint).toBe(
                storedRow(real.db, p, k)?.fingerprint,
              )
          const pairs = real.db.raw
            .prepare(
              'SELECT COUNT(*) AS n, COUNT(DISTINCT project_id || char(0) || key) AS d FROM idempotency',
            )
            .get() as { n: number; d: number }
          expect(pairs.n).toBe(pairs.d)
        } finally {
          real.db.close()
        }
      }),
      { numRuns: file ? 40 : 150 },
    )
  })
}

it('[IDEM-001] reads the keys once, then looks a key never used up without a statement and a used one with one', () => {
  const db = openDb(':memory:')
  try {
    const run = db.stmt.bind(db)
    const statements: string[] = []
    ;(db as { stmt: typeof db.stmt }).stmt = (sql) => {
      statements.push(sql)
      return run(sql)
    }
    const receipts = new Receipts(db)
    db.tx(() => receipts.put(receipt('p1', 'used', 1)))
    statements.length = 0
    expect(receipts.live('p1', 'fresh', 0)).toBeUndefined()
    expect(receipts.live('p2', 'used', 0)).toBeUndefined()
    db.tx(() => receipts.put(receipt('p2', 'other', 2)))
    expect(receipts.live('p2', 'fresh', 0)).toBeUndefined()
    // The one put wrote its row; no lookup of a key never used read anything.
    expect(statements.filter((s) => s.includes('idempotency'))).toEqual([
      statements.find((s) => s.includes('INSERT INTO idempotency')),
    ])
    statements.length = 0
    expect(receipts.live('p1', 'used', 0)?.fingerprint).toBe('f1')
    expect(receipts.live('p2', 'other', 0)?.fingerprint).toBe('f2')
    expect(statements.filter((s) => s.includes('FROM idempotency')).length).toBe(2)
  } finally {
    db.close()
  }
})
