/**
 * Withdrawn permission (States and transitions; Authentication 3 and 6): a running execution is canceled with
 * AUTHORIZATION_REVOKED when a scope it needed is withdrawn from its key, or its Deployment is removed from the
 * key's allowed list; executions that did not depend on what was withdrawn keep running.
 */
import { expect, it } from 'vitest'
import { req } from '../../support/req.js'
import { readRun, startRun } from '../../support/runs.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const text = { input: [{ type: 'TEXT', text: 'Summarise the quarterly report' }] }

async function turnStatus(r: SessionReceipt, key = target.world.keys.full) {
  const res = await target.api.get(r.status_url, { key })
  expect(res.status, res.text).toBe(200)
  return res.body as { status: string; error: { code: string } | null }
}

it(`${req('STATE-019')} cancels the key's running Runs with AUTHORIZATION_REVOKED when workflows:run is withdrawn; other scopes leave them running`, async (ctx) => {
  const control = mockOnly(ctx, target, 'withdrawing a scope is a management action')
  const wf = role(ctx, target.world.workflows.available, 'available workflow')
  await control.queueScenario(wf, 'slow')
  const { run_id } = await startRun(target, wf)
  await control.advance(2)
  const key = target.world.keys.full
  const { scopes } = (await control.fixtures()).projects
    .flatMap((p) => p.api_keys)
    .find((k) => k.key === key)!
  // Withdrawing a scope the Run did not need (usage:read) changes nothing.
  const first = await control.setKeyScopes(
    key,
    scopes.filter((s) => s !== 'usage:read'),
  )
  expect(first.canceled).toEqual([])
  expect((await readRun(target, run_id)).run.status).toBe('RUNNING')
  const second = await control.setKeyScopes(
    key,
    scopes.filter((s) => s !== 'usage:read' && s !== 'workflows:run'),
  )
  expect(second.canceled).toContain(run_id)
  const { run } = await readRun(target, run_id)
  expect(run.status).toBe('CANCELED')
  expect(run.error?.code).toBe('AUTHORIZATION_REVOKED')
})

it(`${req('STATE-019')} cancels the key's running Turns with AUTHORIZATION_REVOKED when their Deployment is removed from the key's allowed list`, async (ctx) => {
  const control = mockOnly(ctx, target, "changing a key's Deployments is a management action")
  const key = role(ctx, target.world.keys.oneDeployment, 'key with one Deployment')
  await control.queueScenario(target.world.deployments.active, 'slow', 2)
  const viaOne = await createSession(target, text, { key })
  expect(viaOne.status, viaOne.text).toBe(202)
  const viaFull = await createSession(target, text)
  expect(viaFull.status, viaFull.text).toBe(202)
  await control.advance(2)
  const { canceled } = await control.setKeyDeployments(key, [])
  expect(canceled).toContain((viaOne.body as SessionReceipt).turn_id)
  const turn = await turnStatus(viaOne.body as SessionReceipt)
  expect(turn.status).toBe('CANCELED')
  expect(turn.error?.code).toBe('AUTHORIZATION_REVOKED')
  // The same Deployment's Turn started by another key that still may call it keeps running.
  expect((await turnStatus(viaFull.body as SessionReceipt)).status).toBe('RUNNING')
})
