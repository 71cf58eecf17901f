/**
 * Cancel and delete of Runs (States and transitions; Endpoints; Deletion): 202 CANCEL_REQUESTED until the
 * child executions are confirmed ended, 200 unchanged when terminal, EXTERNAL_EFFECT_UNKNOWN, a stopped
 * workflow cancels its Runs, delete blocks reads at once and replays its receipt.
 */
import { describe, expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { waitUntilEnded } from '../../support/poll.js'
import { req } from '../../support/req.js'
import {
  cancelRun,
  deleteRun,
  expectContentBlocked,
  externalEffectUnknown,
  getRun,
  postRun,
  readRun,
  readWorkflow,
  startRun,
  stopWorkflow,
  TERMINAL_RUN_STATUSES,
  validRunBody,
  type RunDetailView,
  type RunReceipt,
} from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

describe('run cancel and delete', () => {
  it(`${req('STATE-008', 'STATE-009')} answers 202 CANCEL_REQUESTED; the Run stays so until confirmed, then CANCELED`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted execution on virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'slow')
    const { run_id } = await startRun(target, wf)
    await control.advance(2)
    const res = await cancelRun(target, run_id)
    expect(res.status).toBe(202)
    expect((res.body as RunDetailView).run.status).toBe('CANCEL_REQUESTED')
    expect((await readRun(target, run_id)).run.status).toBe('CANCEL_REQUESTED')
    await control.advance(5)
    const { run, outputs } = await readRun(target, run_id)
    expect(run.status).toBe('CANCELED')
    expect(run.error?.code).toBe('CANCELED')
    expect(outputs).toEqual([])
  })

  it(`${req('STATE-011', 'STATE-002')} answers 200 and leaves a terminal Run unchanged`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted execution on virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf)
    await control.advance(10)
    const before = await readRun(target, run_id)
    expect(before.run.status).toBe('SUCCEEDED')
    const res = await cancelRun(target, run_id)
    expect(res.status).toBe(200)
    expect((res.body as RunDetailView).run.status).toBe('SUCCEEDED')
    await control.advance(10)
    expect(await readRun(target, run_id)).toEqual(before)
  })

  it(`${req('STATE-008', 'STATE-011')} answers a cancel with 202 while the Run is not terminal, 200 once it is; the Run ends and stays ended`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    if (target.control) await target.control.queueScenario(wf, 'slow')
    const receipt = await startRun(target, wf)
    const first = await cancelRun(target, receipt.run_id)
    expect([200, 202], first.text).toContain(first.status)
    const after = (await readRun(target, receipt.run_id)).run.status
    // 200 only for a Run already terminal; after a 202 it is CANCEL_REQUESTED until confirmed, or ended.
    if (first.status === 200) expect(TERMINAL_RUN_STATUSES.has(after), after).toBe(true)
    else expect(after === 'CANCEL_REQUESTED' || TERMINAL_RUN_STATUSES.has(after), after).toBe(true)
    // The answer's body is not shown in the document; the mock answers the Run read.
    await mockChoice(
      target,
      'the cancel answer is the Run read {run, outputs, next_cursor}',
      () => {
        expect(first.status).toBe(202)
        expect((first.body as RunDetailView).run.status).toBe('CANCEL_REQUESTED')
      },
    )
    const ended = await waitUntilEnded(target, receipt.status_url, { mockAdvanceS: 10 })
    expect(TERMINAL_RUN_STATUSES.has(ended), ended).toBe(true)
    const again = await cancelRun(target, receipt.run_id)
    expect(again.status, again.text).toBe(200)
    expect((await readRun(target, receipt.run_id)).run.status).toBe(ended)
  })

  it(`${req('RUN-020', 'AUTH-004')} needs runs:cancel and an Idempotency-Key`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const { run_id } = await startRun(target, wf)
    expectError(await cancelRun(target, run_id, readOnly), 'INSUFFICIENT_SCOPE')
    expectError(
      await target.api.post(`/v1/runs/${run_id}/cancel`, {}, { key: target.world.keys.full }),
      'INVALID_IDEMPOTENCY_KEY',
    )
  })

  it(`${req('STATE-012')} ends FAILED with EXTERNAL_EFFECT_UNKNOWN when a cancel cannot confirm an external effect`, async (ctx) => {
    const control = mockOnly(ctx, target, 'control API switch')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'slow')
    const { run_id } = await startRun(target, wf)
    await control.advance(2)
    await externalEffectUnknown(target, run_id)
    expect((await cancelRun(target, run_id)).status).toBe(202)
    await control.advance(5)
    const { run } = await readRun(target, run_id)
    expect(run.status).toBe('FAILED')
    expect(run.error?.code).toBe('EXTERNAL_EFFECT_UNKNOWN')
    await control.advance(600)
    expect((await readRun(target, run_id)).run.status).toBe('FAILED')
  })

  it(`${req('STATE-013', 'WF-002', 'RUN-034')} cancels the non-terminal Runs of a stopped workflow with WORKFLOW_UNAVAILABLE`, async (ctx) => {
    const control = mockOnly(ctx, target, 'stopping a workflow through the control API')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'slow', 2)
    const body = await validRunBody(target, wf)
    const a = (await postRun(target, wf, body)).body as RunReceipt
    const b = (await postRun(target, wf, body)).body as RunReceipt
    await control.advance(2)
    await stopWorkflow(target, wf)
    for (const id of [a.run_id, b.run_id]) {
      const { run } = await readRun(target, id)
      expect(run.status).toBe('CANCELED')
      expect(run.error?.code).toBe('WORKFLOW_UNAVAILABLE')
    }
    const w = await readWorkflow(target, wf)
    expect(w.available).toBe(false)
    expect(w.error?.code).toBe('WORKFLOW_UNAVAILABLE')
    expectError(await postRun(target, wf, body), 'WORKFLOW_UNAVAILABLE')
  })

  it(`${req('RUN-021', 'DEL-001', 'STATE-021')} answers 202 to a delete; reads are blocked at once; a re-send returns the same receipt`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    if (target.control) await target.control.queueScenario(wf, 'slow')
    const { run_id } = await startRun(target, wf)
    const idem = newIdempotencyKey('delete')
    const res = await deleteRun(target, run_id, idem)
    expect(res.status).toBe(202)
    await expectContentBlocked(target, await getRun(target, run_id))
    await expectContentBlocked(
      target,
      await target.api.get(`/v1/runs/${run_id}/outputs`, { key: target.world.keys.full }),
    )
    await expectContentBlocked(target, await cancelRun(target, run_id))
    const again = await deleteRun(target, run_id, idem)
    expect(again.status).toBe(202)
    expect(again.body).toEqual(res.body)
    await expectContentBlocked(target, await deleteRun(target, run_id))
  })

  it(`${req('RUN-021', 'AUTH-004')} delete needs runs:delete and an Idempotency-Key`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const { run_id } = await startRun(target, wf)
    expectError(
      await target.api.delete(
        `/v1/runs/${run_id}`,
        {},
        { key: readOnly, idem: newIdempotencyKey() },
      ),
      'INSUFFICIENT_SCOPE',
    )
    expectError(
      await target.api.delete(`/v1/runs/${run_id}`, {}, { key: target.world.keys.full }),
      'INVALID_IDEMPOTENCY_KEY',
    )
  })

  it(`${req('STATE-003')} a failed Run never resumes; its key returns the same Run, a new key a new one`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted failure')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'fail')
    const idem = newIdempotencyKey('run')
    const body = await validRunBody(target, wf)
    const first = (await postRun(target, wf, body, { idem })).body as RunReceipt
    await control.advance(10)
    expect((await readRun(target, first.run_id)).run.status).toBe('FAILED')
    const again = (await postRun(target, wf, body, { idem })).body as RunReceipt
    expect(again.run_id).toBe(first.run_id)
    expect((await readRun(target, first.run_id)).run.status).toBe('FAILED')
    const fresh = (await postRun(target, wf, body)).body as RunReceipt
    expect(fresh.run_id).not.toBe(first.run_id)
  })
})
