/** Internal Sessions held by workflow steps (Workflows and Runs, Run request rule 6). */
import { it, expect } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { startRun } from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget({ freshEach: false })

it(`${req('RUN-037', 'ERR-075')} refuses Session paths on a Session held by a workflow step with 409 WORKFLOW_MANAGED_SESSION`, async (ctx) => {
  const control = mockOnly(ctx, target, 'the internal Session id is known through the control API')
  const workflowId = role(ctx, target.world.workflows.available, 'available workflow')
  const run = await startRun(target, workflowId)
  const { session_ids } = await control.runSessions(run.run_id)
  expect(session_ids.length).toBeGreaterThan(0)
  const id = session_ids[0]!
  const key = target.world.keys.full
  expectError(await target.api.get(`/v1/sessions/${id}`, { key }), 'WORKFLOW_MANAGED_SESSION')
  expectError(
    await target.api.post(
      `/v1/sessions/${id}/turns`,
      { input: [{ type: 'TEXT', text: 'x' }] },
      { key, idem: newIdempotencyKey() },
    ),
    'WORKFLOW_MANAGED_SESSION',
  )
  expectError(
    await target.api.delete(`/v1/sessions/${id}`, {}, { key, idem: newIdempotencyKey() }),
    'WORKFLOW_MANAGED_SESSION',
  )
})
