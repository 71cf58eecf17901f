/**
 * Run content retention (Limits > Retention; Events > SSE streams): after a Run's retention_days every read
 * path of the Run (detail, outputs, events, cancel, delete, actions) answers 410, and a stream cursor of the
 * expired Run is 410 EVENT_CURSOR_EXPIRED with details.content_expired true. The document names no code for
 * an expired Run; the mock's choice (SESSION_EXPIRED, x-assumed) is asserted on a mock only.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { cancelRun, deleteRun, getRun, readRun, startRun } from '../../support/runs.js'
import { assumedRule, mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { closeAllStreams, openRaw } from '../events/sse-support.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()
afterEach(() => {
  closeAllStreams()
})

const DAY_S = 24 * 60 * 60

describe('run content retention', () => {
  it(`${req('RET-013', 'RET-010', 'SSE-019')} answers 410 on every read path of a Run past retention_days; a cursor is EVENT_CURSOR_EXPIRED with content_expired`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    const control = mockOnly(ctx, target, 'retention on virtual time')
    assumedRule(ctx, target, 'the 410 code of an expired Run')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await startRun(target, wf, { limits: { retention_days: 1 } })
    await control.advance(10)
    expect((await readRun(target, run_id)).run.status).toBe('SUCCEEDED')
    const s = await openRaw(target.baseUrl, `/v1/runs/${run_id}/events`, {
      key: target.world.keys.full,
    })
    expect(s.status).toBe(200)
    await s.waitFor((x) => x.events().length > 0, 'a stored event')
    const eventId = s.events()[0]!.id!
    s.close()
    await control.advance(DAY_S)
    const key = target.world.keys.full
    const paths = [
      () => getRun(target, run_id),
      () => target.api.get(`/v1/runs/${run_id}/outputs`, { key }),
      () => target.api.get(`/v1/runs/${run_id}/events`, { key }),
      () => cancelRun(target, run_id),
      () => deleteRun(target, run_id),
      () =>
        target.api.get(`/v1/runs/${run_id}/actions/00000000-0000-4000-8000-00000000beef`, { key }),
    ]
    for (const send of paths) {
      const error = expectError(await send(), 'SESSION_EXPIRED')
      expect(error.details).toMatchObject({ content_expired: true })
    }
    const cursor = expectError(
      await target.api.get(`/v1/runs/${run_id}/events`, { key, query: { after: eventId } }),
      'EVENT_CURSOR_EXPIRED',
    )
    expect(cursor.details).toMatchObject({
      content_expired: true,
      state_url: `/v1/runs/${run_id}`,
      items_url: `/v1/runs/${run_id}/outputs`,
    })
    // The recovery procedure: state_url answers the same 410, so the client knows the content is gone.
    expectError(await getRun(target, run_id), 'SESSION_EXPIRED')
  })

  it(`${req('RET-009', 'RET-010')} keeps a Run's result file no longer than the Run's content`, async (ctx) => {
    const control = mockOnly(ctx, target, 'a scripted Run with a FILE output')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'file-output')
    const { run_id } = await startRun(target, wf, {
      limits: { run_seconds: 3600, retention_days: 1 },
    })
    await control.advance(10)
    const { run, outputs } = await readRun(target, run_id)
    expect(run.status).toBe('SUCCEEDED')
    const file = outputs.find((o) => o.type === 'FILE')!
    const res = await target.api.get(`/v1/artifacts/${String(file.artifact_id)}`, {
      key: target.world.keys.full,
    })
    expect(res.status).toBe(200)
    const artifact = res.body as { expires_at: string }
    expect(Date.parse(artifact.expires_at)).toBe(Date.parse(run.expires_at!))
  })
})
