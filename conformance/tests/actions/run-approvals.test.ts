/**
 * Run approvals with the interactive-action facility (States and transitions: REQUIRES_ACTION; Workflows and
 * Runs: actions and resolve; Approval handling rules 1-6). Mock only: the facility is switched on with the
 * control API and the `needs-approval` scenario holds a stage at 2 s and confirms the result at 4 s.
 */
import { afterEach, describe, expect, it, type TestContext } from 'vitest'
import {
  approval,
  changeContent,
  readAction,
  resolveRunAction,
  runAtAction,
  setInteractiveActions,
  setKeyScopes,
  type ApprovalContentView,
  type RunWithActions,
} from '../../support/actions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import {
  MOCK_APPROVAL_WORKFLOW,
  cancelRun,
  postRun,
  readRun,
  startRun,
  validRunBody,
} from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { closeAllStreams, openRaw } from '../events/sse-support.js'

const target = useTarget()
afterEach(() => closeAllStreams())

/** Facility on, `needs-approval` queued, a Run started and advanced to its stage hold. */
const heldRun = (ctx: TestContext, enabled = true) =>
  runAtAction(ctx, target, 'needs-approval', enabled)

/** The pending action of a held Run and its review content. */
async function pendingApproval(runId: string) {
  const run = (await readRun(target, runId)).run as RunWithActions
  const action = run.required_actions?.[0]
  expect(action, JSON.stringify(run)).toBeDefined()
  const res = await readAction(target, runId, action!.id)
  expect(res.status, res.text).toBe(200)
  return { run, action: action!, content: res.body as ApprovalContentView }
}

describe('run approvals', () => {
  it(`${req('STATE-022', 'ERR-098')} keeps the beta rule without the facility: FAILED with ACTION_REQUIRED_UNSUPPORTED`, async (ctx) => {
    const { control, run_id, run } = await heldRun(ctx, false)
    await control.advance(1)
    const after = (await readRun(target, run_id)).run as RunWithActions
    expect(run.status === 'FAILED' ? run : after).toMatchObject({
      status: 'FAILED',
      error: { code: 'ACTION_REQUIRED_UNSUPPORTED' },
    })
    expect(after.required_actions).toBeUndefined()
  })

  it(`${req('STATE-023', 'ACT-016')} waits in REQUIRES_ACTION with required_actions and a run.action_required event`, async (ctx) => {
    const control = mockOnly(ctx, target, 'switches the facility on and moves virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await setInteractiveActions(target, target.world.projectId, true)
    await control.queueScenario(wf, 'needs-approval')
    const { run_id } = await startRun(target, wf)
    const s = await openRaw(target.baseUrl, `/v1/runs/${run_id}/events`, {
      key: target.world.keys.full,
    })
    expect(s.status, s.text()).toBe(200)
    await control.advance(2)
    await s.waitFor(
      (x) => x.events().some((f) => f.event === 'run.action_required'),
      'run.action_required',
    )
    const frame = s.events().find((f) => f.event === 'run.action_required')!
    const event = JSON.parse(frame.data!) as { data: { kind: string; action: { id: string } } }
    const { run, action } = await pendingApproval(run_id)
    expect(run.status).toBe('REQUIRES_ACTION')
    expect(run.required_actions).toHaveLength(1)
    expect(action).toMatchObject({
      kind: 'APPROVAL',
      approval_kind: 'STAGE_HOLD',
      status: 'PENDING',
    })
    expect(event.data).toMatchObject({ kind: 'REQUIRED_ACTION', action: { id: action.id } })
    // The script waits: time passing does not finish the Run.
    await control.advance(30)
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
  })

  it(`${req('RUN-022', 'ACT-009', 'ACT-017')} serves the review content with its content_hash and the stage hold's decisions`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { content } = await pendingApproval(run_id)
    expect(content.kind).toBe('STAGE_HOLD')
    expect(content.content_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(content.decisions).toEqual(['APPROVE', 'SKIP', 'REJECT_JOB'])
    expect(content.rows?.length).toBeGreaterThan(0)
  })

  it(`${req('RUN-023', 'ACT-006', 'ACT-007', 'ACT-008', 'ACT-018')} APPROVE resumes the Run, CONFIRM ends it SUCCEEDED`, async (ctx) => {
    const { control, run_id } = await heldRun(ctx)
    const hold = await pendingApproval(run_id)
    const res = await resolveRunAction(
      target,
      run_id,
      hold.action.id,
      approval('APPROVE', hold.content.content_hash),
    )
    expect(res.status, res.text).toBe(202)
    expect(res.body).toMatchObject({
      action_id: hold.action.id,
      status: 'RESOLVED',
      run_id,
      run_status: 'RUNNING',
      turn_id: null,
      turn_status: null,
      status_url: `/v1/runs/${run_id}`,
    })
    // The remaining steps are scheduled from the resolution: the result confirmation 2 s later.
    await control.advance(2)
    const confirm = await pendingApproval(run_id)
    expect(confirm.action.id).not.toBe(hold.action.id)
    expect(confirm.content).toMatchObject({
      kind: 'RESULT_CONFIRMATION',
      decisions: ['CONFIRM', 'REJECT_JOB'],
    })
    const wrong = await resolveRunAction(
      target,
      run_id,
      confirm.action.id,
      approval('APPROVE', confirm.content.content_hash),
    )
    expectError(wrong, 'INVALID_INPUT', { status: 422 })
    const ok = await resolveRunAction(
      target,
      run_id,
      confirm.action.id,
      approval('CONFIRM', confirm.content.content_hash),
    )
    expect(ok.status, ok.text).toBe(202)
    await control.advance(1)
    const done = await readRun(target, run_id)
    expect(done.run.status).toBe('SUCCEEDED')
    expect(done.outputs.length).toBeGreaterThan(0)
  })

  it(`${req('ACT-017')} SKIP resumes a stage hold; a decision of the other kind is 422 INVALID_INPUT`, async (ctx) => {
    const { control, run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const confirm = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('CONFIRM', content.content_hash),
    )
    expectError(confirm, 'INVALID_INPUT', { status: 422 })
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('SKIP', content.content_hash),
    )
    expect(res.status, res.text).toBe(202)
    expect((res.body as { run_status: string }).run_status).toBe('RUNNING')
    await control.advance(2)
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
  })

  it(`${req('ACT-022')} REJECT_JOB ends the Run CANCELED and it never resumes`, async (ctx) => {
    const { control, run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('REJECT_JOB', content.content_hash),
    )
    expect(res.status, res.text).toBe(202)
    expect((res.body as { run_status: string }).run_status).toBe('CANCELED')
    await control.advance(60)
    const run = (await readRun(target, run_id)).run as RunWithActions
    expect(run).toMatchObject({ status: 'CANCELED', error: { code: 'CANCELED' } })
    expect(run.required_actions).toBeUndefined()
  })

  it(`${req('RUN-023')} answers the same 202 to the same key and body`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const idem = newIdempotencyKey('resolve')
    const body = approval('APPROVE', content.content_hash)
    const first = await resolveRunAction(target, run_id, action.id, body, { idem })
    const again = await resolveRunAction(target, run_id, action.id, body, { idem })
    expect(first.status, first.text).toBe(202)
    expect(again.status).toBe(202)
    expect(again.body).toEqual(first.body)
    // Another key for an action already resolved: the Run no longer waits for it.
    expectError(await resolveRunAction(target, run_id, action.id, body), 'ACTION_CANCELED')
  })

  it(`${req('ACT-019', 'ERR-033')} refuses a content_hash of changed content with 409 ACTION_CONTENT_CHANGED`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const changed = await changeContent(target, run_id, action.id)
    expect(changed.content_hash).not.toBe(content.content_hash)
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'ACTION_CONTENT_CHANGED')
    // Read again and decide again.
    const reread = await readAction(target, run_id, action.id)
    const fresh = reread.body as ApprovalContentView
    expect(fresh.content_hash).toBe(changed.content_hash)
    const ok = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', fresh.content_hash),
    )
    expect(ok.status, ok.text).toBe(202)
  })

  it(`${req('ACT-023', 'ERR-032')} refuses an approval from a key without actions:approve (403 ACTION_NOT_RESOLVABLE_BY_CALLER)`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const key = target.world.keys.full
    await setKeyScopes(target, key, [
      'runs:read',
      'workflows:read',
      'workflows:run',
      'actions:resolve',
    ])
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'ACTION_NOT_RESOLVABLE_BY_CALLER')
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
    // Reading the review content needs actions:approve as well.
    expectError(await readAction(target, run_id, action.id), 'INSUFFICIENT_SCOPE')
  })

  it(`${req('ACT-023', 'ERR-032')} refuses an approval from a key holding no action scope at all with ACTION_NOT_RESOLVABLE_BY_CALLER, not INSUFFICIENT_SCOPE`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const key = target.world.keys.full
    await setKeyScopes(target, key, ['runs:read', 'workflows:read', 'workflows:run'])
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'ACTION_NOT_RESOLVABLE_BY_CALLER')
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
  })

  it(`${req('ERR-077', 'ACT-022')} expires the action on the clock: Run EXPIRED, resolve 409 ACTION_EXPIRED`, async (ctx) => {
    const { control, run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    const seconds = (Date.parse(action.expires_at) - Date.parse((await control.clock()).now)) / 1000
    await control.advance(seconds)
    const run = (await readRun(target, run_id)).run as RunWithActions
    expect(run).toMatchObject({ status: 'EXPIRED', error: { code: 'ACTION_EXPIRED' } })
    expect(run.required_actions).toBeUndefined()
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'ACTION_EXPIRED')
    expectError(await readAction(target, run_id, action.id), 'ACTION_EXPIRED')
  })

  it(`${req('ERR-078', 'ACT-022')} answers 409 ACTION_CANCELED once the Run is canceled`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    expect((await cancelRun(target, run_id)).status).toBe(202)
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'ACTION_CANCELED')
  })

  it(`${req('ERR-076')} answers 409 RUN_TERMINAL to a resolve once the canceled Run has ended`, async (ctx) => {
    const { control, run_id } = await heldRun(ctx)
    const { action, content } = await pendingApproval(run_id)
    expect((await cancelRun(target, run_id)).status).toBe(202)
    await control.advance(60)
    expect((await readRun(target, run_id)).run.status).toBe('CANCELED')
    const res = await resolveRunAction(
      target,
      run_id,
      action.id,
      approval('APPROVE', content.content_hash),
    )
    expectError(res, 'RUN_TERMINAL')
    // A settled outcome repeats on an unchanged resend (retryable false).
    expectError(
      await resolveRunAction(target, run_id, action.id, approval('APPROVE', content.content_hash)),
      'RUN_TERMINAL',
    )
  })

  it(`${req('ERR-035')} answers 413 APPROVAL_CONTENT_TOO_LARGE for review content over 100 rows`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action } = await pendingApproval(run_id)
    const rows = Array.from({ length: 101 }, (_, i) => ({ row: i }))
    await changeContent(target, run_id, action.id, { rows })
    expectError(await readAction(target, run_id, action.id), 'APPROVAL_CONTENT_TOO_LARGE')
  })

  it(`${req('ERR-034')} answers 409 APPROVAL_CONTENT_UNAVAILABLE when the review content cannot be read`, async (ctx) => {
    const { run_id } = await heldRun(ctx)
    const { action } = await pendingApproval(run_id)
    await changeContent(target, run_id, action.id, { available: false })
    expectError(await readAction(target, run_id, action.id), 'APPROVAL_CONTENT_UNAVAILABLE')
  })
})

it(`${req('STATE-023')} accepts an approval-gated workflow once the facility is provided (the beta refuses it with 422)`, async (ctx) => {
  mockOnly(ctx, target, 'switches the facility on')
  const refused = await postRun(
    target,
    MOCK_APPROVAL_WORKFLOW,
    await validRunBody(target, MOCK_APPROVAL_WORKFLOW),
  )
  expect(refused.status).toBe(422)
  await setInteractiveActions(target, target.world.projectId, true)
  const accepted = await postRun(
    target,
    MOCK_APPROVAL_WORKFLOW,
    await validRunBody(target, MOCK_APPROVAL_WORKFLOW),
  )
  expect(accepted.status, accepted.text).toBe(202)
})
