/**
 * Run actions in the private beta (Endpoints > Workflows and Runs, approval handling rules): the action paths
 * exist with their scopes, but no Run has actions, so they answer 404 NOT_FOUND; bodies are still checked.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { startRun } from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const approval = {
  decision: 'APPROVE',
  content_hash: 'a'.repeat(64),
  actor: { subject: 'employee-4711' },
}

describe('run actions', () => {
  it(`${req('RUN-022', 'AUTH-004')} reading an action needs runs:read and actions:approve`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const { run_id } = await startRun(target, wf)
    const res = await target.api.get(`/v1/runs/${run_id}/actions/${randomUUID()}`, {
      key: readOnly,
    })
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('STATE-022')} has no actions to read or resolve in the beta (404 NOT_FOUND)`, async (ctx) => {
    mockOnly(
      ctx,
      target,
      'the beta has no interactive actions (a real target may provide them later)',
    )
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf)
    const action = randomUUID()
    const key = target.world.keys.full
    expectError(await target.api.get(`/v1/runs/${run_id}/actions/${action}`, { key }), 'NOT_FOUND')
    const res = await target.api.post(`/v1/runs/${run_id}/actions/${action}/resolve`, approval, {
      key,
      idem: newIdempotencyKey('resolve'),
    })
    expectError(res, 'NOT_FOUND')
  })

  it(`${req('ACT-011', 'ACT-012', 'ACT-013')} refuses a malformed approval body with INVALID_INPUT`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf)
    const path = `/v1/runs/${run_id}/actions/${randomUUID()}/resolve`
    for (const body of [
      { ...approval, decision: 'MAYBE' },
      { ...approval, content_hash: 'A'.repeat(64) },
      { ...approval, actor: { subject: ' padded ' } },
      { ...approval, extra: 1 },
    ]) {
      const res = await target.api.post(path, body, {
        key: target.world.keys.full,
        idem: newIdempotencyKey('resolve'),
      })
      expectError(res, 'INVALID_INPUT')
      expect(res.status).toBeLessThan(500)
    }
  })
})
