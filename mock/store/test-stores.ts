/**
 * Test helpers: schema upgrades (a kept store made by an earlier version, then opened with every migration), and
 * writes run in a transaction that commits, rolls back, or commits around a savepoint that rolls back.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packageFile } from '../../spec/index.js'
import { openDb, type Db } from './db.js'
import type { ExecutionRecord } from './executions.js'

const SCHEMA = packageFile('mock', 'store', 'schema')

/** A schema folder holding the migrations before `first` (a store made by an earlier version). */
function schemaBefore(first: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'schema-before-'))
  for (const f of readdirSync(SCHEMA).filter((f) => f.endsWith('.sql') && f < first))
    copyFileSync(join(SCHEMA, f), join(dir, f))
  return dir
}

/** A store file made before schema `first` and filled by `fill`, then opened with every schema for `check`. */
export function upgraded(first: string, fill: (old: Db) => void, check: (db: Db) => void): void {
  const before = schemaBefore(first)
  const dir = mkdtempSync(join(tmpdir(), 'store-upgrade-'))
  const path = join(dir, 'store.db')
  try {
    const old = openDb(path, { schemaDir: before })
    fill(old)
    old.close()
    const db = openDb(path)
    try {
      check(db)
    } finally {
      db.close()
    }
  } finally {
    rmSync(before, { recursive: true, force: true })
    rmSync(dir, { recursive: true, force: true })
  }
}

/** How a write's transaction ends: committed, rolled back, or committed around a savepoint rolled back. */
export type TxOutcome = 'commit' | 'rollback' | 'savepoint rolled back'

export const TX_OUTCOMES: readonly TxOutcome[] = ['commit', 'rollback', 'savepoint rolled back']

/** Runs write in db.tx() (in a nested tx(), a savepoint, for 'savepoint rolled back'), ended as outcome says. */
export function inTx(db: Db, outcome: TxOutcome, write: () => void): void {
  const undo = new Error('undone by the test')
  try {
    db.tx(() => {
      if (outcome === 'savepoint rolled back') {
        try {
          db.tx(() => {
            write()
            throw undo
          })
        } catch (error) {
          if (error !== undo) throw error
        }
        return
      }
      write()
      if (outcome === 'rollback') throw undo
    })
  } catch (error) {
    if (error !== undo) throw error
  }
}

/** A new execution as acceptExecution stores it (a Turn, QUEUED, not admitted), with the fields given. */
export function newExecution(fields: Partial<ExecutionRecord> & { id: string }): ExecutionRecord {
  return {
    seq: 0,
    kind: 'TURN',
    project_id: 'p',
    api_key: 'k',
    deployment_id: null,
    session_id: null,
    session_seq: null,
    workflow_id: null,
    published_version: null,
    status: 'QUEUED',
    error: null,
    scenario: 's',
    steps: [],
    input: null,
    metadata: {},
    execution_seconds: 60,
    queue_seconds: 60,
    max_su: 1,
    spent_su: 0,
    usage_status: 'PENDING',
    created_at: 0,
    admitted_at: null,
    started_at: null,
    completed_at: null,
    terminal: false,
    queue_due_at: null,
    queue_timer_seq: null,
    ...fields,
  }
}
