/**
 * Progress notices (Webhook notifications; Events): an endpoint that subscribes to tool.started gets one
 * signed notice per tool call, carrying ids and status only. Needs an in-process mock started with
 * allowInsecureWebhooks (the receiver is on 127.0.0.1) and a scripted execution that calls tools: mock only.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { req } from '../../support/req.js'
import { startRun } from '../../support/runs.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { loopbackReceiver, mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { NOTIFICATION_FIELDS } from '../../support/webhook-checks.js'
import { useTestReceiver } from './receiver.js'

const target = useTarget({ allowInsecureWebhooks: true })
const receiver = useTestReceiver()

describe('progress notices', () => {
  it(`${req('WHM-013', 'WHN-002', 'WHN-004')} an endpoint subscribed to tool.started gets one notice per tool call, with ids and status only`, async (ctx) => {
    loopbackReceiver(ctx, target)
    const control = mockOnly(ctx, target, 'scripts an execution that calls tools')
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const created = await target.api.post(
      `/api/runtime/projects/${target.world.projectId}/webhooks`,
      { url: `${receiver.baseUrl}/hook`, event_types: ['tool.started', 'turn.completed'] },
      { key: owner },
    )
    expect(created.status, created.text).toBe(201)
    const marker = `TOOL-${randomUUID()}`
    await control.queueScenario(target.world.deployments.active, {
      steps: [
        { at: 1, step: 'running' },
        { at: 2, step: 'tool', name: 'web_search', arguments: { q: marker }, result: marker },
        { at: 3, step: 'tool', name: 'read_file', arguments: { path: marker } },
        { at: 4, step: 'output', output: { contract: 'required', type: 'TEXT', text: 'Done.' } },
        { at: 5, step: 'succeed' },
      ],
    })
    const res = await createSession(target, { input: [{ type: 'TEXT', text: 'Go.' }] })
    expect(res.status, res.text).toBe(202)
    const receipt = res.body as SessionReceipt
    await control.advance(10)
    await receiver.waitFor(3)
    const types = receiver.received.map((d) => d.json?.type)
    expect(types.filter((t) => t === 'tool.started')).toHaveLength(2)
    expect(types).toContain('turn.completed')
    for (const d of receiver.received.filter((x) => x.json?.type === 'tool.started')) {
      expect(d.json).toMatchObject({
        session_id: receipt.session_id,
        turn_id: receipt.turn_id,
        status: 'RUNNING',
      })
      for (const key of Object.keys(d.json!)) expect(NOTIFICATION_FIELDS).toContain(key)
      // A notification carries no raw input or result: neither the tool's arguments nor its results.
      expect(d.raw.toString('utf8')).not.toContain(marker)
    }
  })

  it(`${req('EVT-005', 'WHN-004', 'WHM-005')} sends one run.step.completed notice per step end, with run_id and step_id, while the Run goes on`, async (ctx) => {
    loopbackReceiver(ctx, target)
    const control = mockOnly(ctx, target, 'scripts a multi-step Run')
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const workflow = role(ctx, target.world.workflows.available, 'available workflow')
    const created = await target.api.post(
      `/api/runtime/projects/${target.world.projectId}/webhooks`,
      { url: `${receiver.baseUrl}/hook`, event_types: ['run.step.completed'] },
      { key: owner },
    )
    expect(created.status, created.text).toBe(201)
    await control.queueScenario(workflow, 'multi-step')
    const { run_id } = await startRun(target, workflow)
    await control.advance(5502)
    // Delivery order is not guaranteed (rule 7): the notices in the order of their events.
    const notices = [...(await receiver.waitFor(4))].sort(
      (a, b) => Number(a.json?.sequence) - Number(b.json?.sequence),
    )
    expect(
      notices.map((d) => ({
        run_id: d.json?.run_id,
        step_id: d.json?.step_id,
        status: d.json?.status,
      })),
    ).toEqual([
      { run_id, step_id: 'collect', status: 'RUNNING' },
      { run_id, step_id: 'analyze', status: 'RUNNING' },
      { run_id, step_id: 'analyze', status: 'RUNNING' },
      { run_id, step_id: 'write', status: 'RUNNING' },
    ])
    for (const d of notices) expect(d.json?.type).toBe('run.step.completed')
  })
})
