/**
 * The open executions a control operation withdraws (STATE-019: a revoked or expired key, a retired
 * Deployment; STATE-013: a stopped Workflow's Runs) are found among their Project's open executions
 * (executions_slots): whatever executions are stored, each lookup returns exactly the open ones of that key,
 * Deployment or Workflow, and searches an index.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { openExecutionsOfDeployment, openExecutionsOfKey } from './access.js'
import { openRunsOfWorkflow } from './executions.js'

let mock: Mock
beforeAll(async () => {
  mock = await createMock()
})
afterAll(() => mock.close())

type Owner = { project: string; keys: string[]; deployments: string[]; workflows: string[] }

/** The default world's Projects with what each owns. */
function owners(): Owner[] {
  const raw = mock.deps.db.raw
  const ids = (sql: string, project: string) =>
    (raw.prepare(sql).all(project) as { id: string }[]).map((r) => r.id)
  return (raw.prepare('SELECT id FROM projects ORDER BY position').all() as { id: string }[]).map(
    ({ id }) => ({
      project: id,
      keys: ids('SELECT key AS id FROM api_keys WHERE project_id = ?', id),
      deployments: ids('SELECT id FROM deployments WHERE project_id = ?', id),
      workflows: ids('SELECT id FROM workflows WHERE project_id = ?', id),
    }),
  )
}

const execution = (world: Owner[]) =>
  fc
    .record({
      owner: fc.constantFrom(...world),
      run: fc.boolean(),
      terminal: fc.boolean(),
      admitted: fc.boolean(),
      pick: fc.nat(),
    })
    .map(({ owner, run, terminal, admitted, pick }) => ({
      project: owner.project,
      key: owner.keys[pick % owner.keys.length]!,
      deployment: run ? null : owner.deployments[pick % owner.deployments.length]!,
      workflow: run ? owner.workflows[pick % owner.workflows.length]! : null,
      kind: run ? 'RUN' : 'TURN',
      terminal: terminal ? 1 : 0,
      admitted: admitted ? 1 : null,
    }))

it('finds exactly the open executions of each key, Deployment and Workflow [STATE-019] [STATE-013]', () => {
  const world = owners()
  const raw = mock.deps.db.raw
  let n = 0
  fc.assert(
    fc.property(fc.array(execution(world), { maxLength: 40 }), (rows) => {
      raw.prepare('DELETE FROM executions').run()
      const insert = raw.prepare(
        `INSERT INTO executions (id, seq, kind, project_id, api_key, deployment_id, workflow_id, status, scenario,
           steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su, created_at,
           admitted_at, terminal)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'QUEUED', 'default', '[]', '[]', '{}', 60, 60, 1, 0, ?, ?)`,
      )
      rows.forEach((r) =>
        insert.run(
          `e${n++}`,
          n,
          r.kind,
          r.project,
          r.key,
          r.deployment,
          r.workflow,
          r.admitted,
          r.terminal,
        ),
      )
      // What a scan of every stored execution gives.
      const expected = (column: string, value: string, kind?: string) =>
        (
          raw
            .prepare(
              `SELECT id FROM executions NOT INDEXED WHERE ${column} = ? AND terminal = 0 ${kind ? `AND kind = '${kind}'` : ''} ORDER BY seq`,
            )
            .all(value) as { id: string }[]
        ).map((r) => r.id)
      for (const owner of world) {
        for (const key of owner.keys)
          expect(openExecutionsOfKey(mock.deps.db, key).sort()).toEqual(
            expected('api_key', key).sort(),
          )
        for (const d of owner.deployments)
          expect(openExecutionsOfDeployment(mock.deps.db, d).sort()).toEqual(
            expected('deployment_id', d).sort(),
          )
        for (const w of owner.workflows)
          expect(openRunsOfWorkflow(mock.deps.db, w).map((e) => e.id)).toEqual(
            expected('workflow_id', w, 'RUN'),
          )
      }
    }),
    { numRuns: 60 },
  )
  raw.prepare('DELETE FROM executions').run()
})

it('searches the Project slots index for them, never a scan of the executions [STATE-019] [STATE-013]', () => {
  const traced: string[] = []
  const db = mock.deps.db
  const stmt = db.stmt.bind(db)
  ;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
    traced.push(sql)
    return stmt(sql)
  }
  try {
    openExecutionsOfKey(db, 'sk_test_a_full')
    openExecutionsOfDeployment(db, 'aaaaaaaa-d000-4000-8000-000000000001')
    openRunsOfWorkflow(db, 'aaaaaaaa-f000-4000-8000-000000000001')
  } finally {
    ;(db as { stmt: typeof db.stmt }).stmt = stmt
  }
  expect(traced).toHaveLength(3)
  for (const sql of traced) {
    const plan = (
      db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ key: 'x', id: 'x' }) as {
        detail: string
      }[]
    ).map((r) => r.detail)
    expect(plan.join(' | ')).toMatch(/SEARCH executions USING INDEX executions_slots/)
    expect(plan.join(' | ')).not.toMatch(/\bSCAN\b/)
  }
})
