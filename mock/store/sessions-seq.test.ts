/**
 * Schema 290: a Session's executions are indexed by the Session's number in creation order (sessions.seq,
 * executions.session_seq), not by its random id, so a new Session's Turn is appended to the index. A Session's
 * Turns are still found in acceptance order, its latest Turn first when asked, on a new store and on a kept
 * store upgraded from before 290.
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { openDb, type Db } from './db.js'
import { insertSession, latestTurnOfSession, turnIdsOfSession } from './executions.js'
import { upgraded } from './test-stores.js'

/** Turns as (session index, turn id) in acceptance order. */
const turnsArb = fc.array(fc.nat(4), { minLength: 1, maxLength: 25 })

function insertRows(db: Db, sessions: number, turns: number[], withSeq: boolean): void {
  for (let s = 0; s < sessions; s++) {
    if (withSeq) {
      const session = {
        id: `s${s}`,
        seq: 0,
        project_id: 'p',
        deployment_id: 'd',
        status: 'ACTIVE' as const,
        deleted_at: null,
        metadata: {},
        created_at: 0,
        last_activity_at: 0,
        workflow_run_id: null,
      }
      insertSession(db, session)
      expect(session.seq).toBe(s + 1)
    } else
      db.raw
        .prepare(
          `INSERT INTO sessions (id, project_id, deployment_id, status, metadata_json, created_at, last_activity_at)
           VALUES (?, 'p', 'd', 'ACTIVE', '{}', 0, 0)`,
        )
        .run(`s${s}`)
  }
  turns.forEach((s, i) =>
    db.raw
      .prepare(
        `INSERT INTO executions (id, seq, kind, project_id, api_key, session_id, ${withSeq ? 'session_seq, ' : ''}status, scenario,
           steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su, created_at, terminal)
         VALUES (?, ?, 'TURN', 'p', 'k', ?, ${withSeq ? '(SELECT seq FROM sessions WHERE id = ?), ' : ''}'QUEUED', 'slow', '[]', '[]', '{}', 3600, 600, 1, 0, 1)`,
      )
      .run(...[`t${i}`, i + 1, `s${s}`, ...(withSeq ? [`s${s}`] : [])]),
  )
}

function expectTurnsInOrder(db: Db, sessions: number, turns: number[]): void {
  for (let s = 0; s < sessions; s++) {
    const ids = turns.flatMap((t, i) => (t === s ? [`t${i}`] : []))
    expect(turnIdsOfSession(db, `s${s}`)).toEqual(ids)
    expect(latestTurnOfSession(db, `s${s}`)?.id).toBe(ids.at(-1))
  }
}

it("[STATE-024] finds a Session's Turns in acceptance order through its number (schema 290)", () => {
  fc.assert(
    fc.property(turnsArb, (turns) => {
      const db = openDb()
      try {
        const sessions = Math.max(...turns) + 1
        insertRows(db, sessions, turns, true)
        expectTurnsInOrder(db, sessions, turns)
        const plan = (
          db.raw
            .prepare(
              'EXPLAIN QUERY PLAN SELECT id FROM executions WHERE session_seq = (SELECT seq FROM sessions WHERE seq = ? AND id = ?) ORDER BY seq',
            )
            .all(1, 's0') as { detail: string }[]
        ).map((r) => r.detail)
        expect(plan.join(' | ')).toMatch(/SEARCH executions USING INDEX executions_session/)
        expect(plan.join(' | ')).toMatch(/SEARCH sessions USING INTEGER PRIMARY KEY/)
      } finally {
        db.close()
      }
    }),
    { numRuns: 30 },
  )
})

it("[STATE-024] numbers a kept store's Sessions and their Turns through the upgrade (schema 290)", () => {
  fc.assert(
    fc.property(turnsArb, (turns) => {
      const sessions = Math.max(...turns) + 1
      upgraded(
        '290',
        (old) => insertRows(old, sessions, turns, false),
        (db) => {
          expectTurnsInOrder(db, sessions, turns)
          const unnumbered = db.raw
            .prepare('SELECT COUNT(*) AS n FROM executions WHERE session_seq IS NULL')
            .get() as { n: number }
          expect(unnumbered.n).toBe(0)
        },
      )
    }),
    { numRuns: 15 },
  )
})
