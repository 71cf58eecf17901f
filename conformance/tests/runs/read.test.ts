/**
 * GET /v1/runs/{run_id} and /outputs (Resources > Run; Endpoints > Workflows and Runs; Retention): the
 * {run, outputs, next_cursor} shape, outputs held back until the Run ends, usage PENDING then FINAL,
 * progress, expires_at from retention_days, output pages and cursors, scope and isolation.
 */
import { describe, expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { getRun, readRun, startRun, TERMINAL_RUN_STATUSES } from '../../support/runs.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const RUN_STATUSES = [
  'QUEUED',
  'RUNNING',
  'REQUIRES_ACTION',
  'CANCEL_REQUESTED',
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
]
const DAY_MS = 24 * 60 * 60 * 1000

const outputs = (runId: string, query: Record<string, string | number> = {}) =>
  target.api.get(`/v1/runs/${runId}/outputs`, { key: target.world.keys.full, query })

describe('run read', () => {
  it(`${req('RUN-001', 'RUN-002', 'RUN-003', 'RUN-005', 'RUN-007', 'RUN-010')} answers {run, outputs, next_cursor} with every run field; outputs empty while not terminal`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf, { metadata: { k: 'v' } })
    const detail = await readRun(target, run_id)
    // Every documented field; an undocumented one is the unknown_response_fields check's (strictness.ts).
    expect(Object.keys(detail)).toEqual(expect.arrayContaining(['next_cursor', 'outputs', 'run']))
    const { run } = detail
    for (const field of [
      'id',
      'workflow_id',
      'published_version',
      'status',
      'phase',
      'usage',
      'error',
      'metadata',
      'created_at',
      'deadline',
      'completed_at',
      'expires_at',
      'progress',
    ])
      expect(run, field).toHaveProperty(field)
    expect(RUN_STATUSES).toContain(run.status)
    expect(Number.isInteger(run.progress.total)).toBe(true)
    expect(run.progress.completed).toBeLessThanOrEqual(run.progress.total)
    if (!TERMINAL_RUN_STATUSES.has(run.status)) expect(detail.outputs).toEqual([])
    if (run.usage.status === 'PENDING') expect(run.usage.total_su).toBeNull()
  })

  it(`${req('RUN-011', 'RUN-005', 'BUD-007', 'RUN-007', 'STATE-002')} publishes the outputs with the terminal status; usage becomes FINAL`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted execution on virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'succeed')
    const { run_id } = await startRun(target, wf)
    await control.advance(2)
    const running = await readRun(target, run_id)
    expect(running.run.status).toBe('RUNNING')
    expect(running.run.phase).toBe('EXECUTING')
    expect(running.outputs).toEqual([])
    expect(running.run.usage).toMatchObject({ status: 'PENDING', total_su: null })
    await control.advance(2.5) // the scenario's output exists now, the Run has not ended
    expect((await readRun(target, run_id)).outputs).toEqual([])
    await control.advance(10)
    const done = await readRun(target, run_id)
    expect(done.run.status).toBe('SUCCEEDED')
    expect(done.run.phase).toBeNull()
    expect(done.outputs.length).toBeGreaterThan(0)
    expect(done.run.usage.status).toBe('FINAL')
    expect(done.run.usage.total_su).toBeGreaterThan(0)
    expect(done.run.progress.completed).toBe(done.run.progress.total)
    await control.advance(3600)
    expect((await readRun(target, run_id)).run.status).toBe('SUCCEEDED')
  })

  it(`${req('RET-010', 'RET-012')} sets expires_at retention_days after the end; the content is gone after it`, async (ctx) => {
    const control = mockOnly(ctx, target, 'retention on virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf, { limits: { retention_days: 2 } })
    expect((await readRun(target, run_id)).run.expires_at).toBeNull()
    await control.advance(10)
    const { run } = await readRun(target, run_id)
    expect(Date.parse(run.expires_at!)).toBe(Date.parse(run.completed_at!) + 2 * DAY_MS)
    await control.advance((2 * DAY_MS) / 1000 - 60)
    expect((await getRun(target, run_id)).status).toBe(200)
    await control.advance(60)
    // RET-013: expired content answers 410 (the code, SESSION_EXPIRED, is the mock's assumed choice).
    expect((await getRun(target, run_id)).status).toBe(410)
  })

  it(`${req('RUN-015', 'AUTH-004')} answers INSUFFICIENT_SCOPE to a key without runs:read`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
    const { run_id } = await startRun(target, wf)
    expectError(await getRun(target, run_id, key), 'INSUFFICIENT_SCOPE')
    expectError(await target.api.get(`/v1/runs/${run_id}/outputs`, { key }), 'INSUFFICIENT_SCOPE')
  })

  it(`${req('AUTH-009')} answers NOT_FOUND to another Project's key and for an unknown Run`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const other = role(ctx, target.world.keys.otherProject, "other Project's key")
    const { run_id } = await startRun(target, wf)
    expectError(await getRun(target, run_id, other), 'NOT_FOUND')
    expectError(await getRun(target, '00000000-0000-4000-8000-00000000beef'), 'NOT_FOUND')
  })

  it(`${req('RUN-016', 'ERR-023')} refuses an outputs limit outside 1 to 100 with 422 INVALID_INPUT (a value outside its range), a malformed one with INVALID_INPUT`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf)
    for (const limit of [0, 101])
      expectError(await outputs(run_id, { limit }), 'INVALID_INPUT', { status: 422 })
    // Not a number at all: "body or input malformed" is INVALID_INPUT, 400 or 422 (the mock answers 422).
    const malformed = await outputs(run_id, { limit: 'ten' })
    expectError(malformed, 'INVALID_INPUT')
    await mockChoice(target, 'a malformed limit is 422, as one out of range', () =>
      expect(malformed.status).toBe(422),
    )
    expect((await outputs(run_id, { limit: 1 })).status).toBe(200)
    expect((await outputs(run_id, { limit: 100 })).status).toBe(200)
  })

  it(`${req('RUN-018', 'RUN-017')} pages the same output list with after=next_cursor, nothing repeated or skipped`, async (ctx) => {
    const control = mockOnly(ctx, target, 'a scripted Run with two outputs')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'partial')
    const { run_id } = await startRun(target, wf)
    await control.advance(10)
    const all = (await outputs(run_id)).body as { outputs: { id: string }[]; next_cursor: null }
    expect(all.outputs.length).toBe(2)
    expect(all.next_cursor).toBeNull()
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const res = await outputs(run_id, cursor ? { limit: 1, after: cursor } : { limit: 1 })
      expect(res.status).toBe(200)
      const page = res.body as { outputs: { id: string }[]; next_cursor: string | null }
      expect(page.outputs.length).toBeLessThanOrEqual(1)
      seen.push(...page.outputs.map((o) => o.id))
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    expect(seen).toEqual(all.outputs.map((o) => o.id))
  })

  it(`${req('RUN-019')} answers 400 INVALID_CURSOR to a cursor of another Run`, async (ctx) => {
    const control = mockOnly(ctx, target, 'a scripted Run with two outputs')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'partial')
    const a = await startRun(target, wf)
    const b = await startRun(target, wf)
    await control.advance(10)
    const page = (await outputs(a.run_id, { limit: 1 })).body as { next_cursor: string }
    expect(page.next_cursor).toEqual(expect.any(String))
    expectError(await outputs(b.run_id, { after: page.next_cursor }), 'INVALID_CURSOR')
    expectError(await outputs(b.run_id, { after: 'not-a-cursor' }), 'INVALID_CURSOR')
  })
})
