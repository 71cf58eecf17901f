import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { TimerKinds } from '../clock/timer-kinds.js'
import { createMock, type Mock } from '../index.js'
import { takeScenario } from '../store/scenarios.js'

const A = {
  project: 'aaaaaaaa-0000-4000-8000-000000000000',
  deployment: 'aaaaaaaa-d000-4000-8000-000000000001',
  workflow: 'aaaaaaaa-f000-4000-8000-000000000001',
}

let mock: Mock
const fired: string[] = []
beforeEach(async () => {
  fired.length = 0
  const kinds = (k: TimerKinds) =>
    k.register<string>('test.tick', (n, { nowMs }) => {
      fired.push(`${n}@${new Date(nowMs).toISOString()}`)
    })
  mock = await createMock({ timerKinds: kinds })
})
afterEach(() => mock.close())

const post = (path: string, body?: unknown) =>
  mock.app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })

async function expectEnvelope(res: Response, code: string, status: number) {
  expect(res.status).toBe(status)
  const body = (await res.json()) as { error: { code: string; request_id: string } }
  expect(body.error.code).toBe(code)
  expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
  expect(res.headers.get('cache-control')).toBe('no-store')
  return body
}

describe('control API', () => {
  it('GET /_mock/fixtures lists projects with keys, Deployments and Workflows', async () => {
    const res = await mock.app.request('/_mock/fixtures')
    expect(res.status).toBe(200)
    const { projects } = (await res.json()) as { projects: Record<string, unknown>[] }
    expect(projects.map((p) => [p.id, p.approved])).toEqual([
      [A.project, true],
      ['bbbbbbbb-0000-4000-8000-000000000000', false],
      ['cccccccc-0000-4000-8000-000000000000', true],
    ])
    const a = projects[0] as {
      owner_token: string
      api_keys: { key: string; scopes: string[]; deployment_ids: string[] }[]
      deployments: Record<string, unknown>[]
      workflows: { id: string; published_version: number }[]
    }
    expect(a.owner_token.split('.')).toHaveLength(3)
    expect(a.api_keys[0]).toMatchObject({
      key: 'sk_test_a_full',
      deployment_ids: expect.arrayContaining([A.deployment]),
    })
    expect(a.api_keys[0]?.scopes).toHaveLength(14)
    const read = a.api_keys.find((k) => k.key === 'sk_test_a_read')!
    for (const s of ['files:write', 'runs:cancel', 'runs:delete', 'workflows:run'])
      expect(read.scopes).not.toContain(s)
    expect(a.deployments.map((d) => d.status)).toEqual(['ACTIVE', 'ACTIVE', 'RETIRED'])
    expect(Object.keys(a.deployments[0]!).sort()).toEqual(
      [
        'id',
        'project_id',
        'name',
        'version',
        'status',
        'digest',
        'model_tier',
        'sandbox_tier',
        'files',
        'skill_count',
        'tools',
        'mcp_count',
        'created_at',
        'revoked_at',
        'requests_per_minute',
        'rate_limits',
        'outputs',
        'input_mime_types',
      ].sort(),
    )
    expect(a.workflows[0]).toMatchObject({ id: A.workflow, published_version: 1 })
  })

  it('GET /_mock/clock answers now in ISO 8601 UTC and the mode', async () => {
    const res = await mock.app.request('/_mock/clock')
    expect(await res.json()).toEqual({ now: '2026-11-02T09:00:00.000Z', mode: 'manual' })
  })

  it('POST /_mock/clock switches mode and keeps now', async () => {
    const res = await post('/_mock/clock', { mode: 'realtime' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { now: string; mode: string }
    expect(body.mode).toBe('realtime')
    expect(Date.parse(body.now) - Date.parse('2026-11-02T09:00:00Z')).toBeLessThan(1000)
    expect(mock.clock.mode).toBe('realtime')
  })

  it('POST /_mock/clock refuses an unknown mode with INVALID_INPUT 422', async () => {
    await expectEnvelope(await post('/_mock/clock', { mode: 'fast' }), 'INVALID_INPUT', 422)
    await expectEnvelope(
      await post('/_mock/clock', { mode: 'manual', extra: 1 }),
      'INVALID_INPUT',
      422,
    )
  })

  it('POST /_mock/clock/advance fires every due timer in order before answering', async () => {
    const { scheduler, clock } = mock.deps
    scheduler.schedule('test.tick', clock.nowMs() + 61_000, 'outside')
    scheduler.schedule('test.tick', clock.nowMs() + 30_000, 'second')
    scheduler.schedule('test.tick', clock.nowMs() + 1_000, 'first')
    const res = await post('/_mock/clock/advance', { seconds: 60 })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ now: '2026-11-02T09:01:00.000Z' })
    expect(fired).toEqual(['first@2026-11-02T09:00:01.000Z', 'second@2026-11-02T09:00:30.000Z'])
  })

  it('POST /_mock/clock/advance refuses seconds that are not a number > 0', async () => {
    for (const body of [{ seconds: 0 }, { seconds: -5 }, { seconds: '10' }, {}]) {
      await expectEnvelope(await post('/_mock/clock/advance', body), 'INVALID_INPUT', 422)
    }
    await expectEnvelope(await post('/_mock/clock/advance', '{not json'), 'INVALID_INPUT', 400)
  })

  it('POST /_mock/reset goes back to the fixture world and its starting clock', async () => {
    await mock.clock.advance(3600)
    mock.deps.db.stmt('UPDATE projects SET approved = 0').run()
    mock.deps.scheduler.schedule('test.tick', mock.deps.clock.nowMs() + 10, 'gone')
    await post('/_mock/scenarios', { target_id: A.deployment, scenario: 'slow' })
    const res = await post('/_mock/reset')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ now: '2026-11-02T09:00:00.000Z', mode: 'manual' })
    expect(mock.fixtures().projects[0]?.approved).toBe(true)
    expect(mock.deps.scheduler.pending()).toBe(0)
    expect(takeScenario(mock.deps.db, A.deployment)).toBeUndefined()
    expect((await post('/_mock/reset', {})).status).toBe(200)
  })

  it('POST /_mock/scenarios queues a scenario for the next executions of a target (201)', async () => {
    const res = await post('/_mock/scenarios', {
      target_id: A.deployment,
      scenario: 'fail',
      times: 2,
    })
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({ target_id: A.deployment, scenario: 'fail', times: 2 })
    expect(
      (await post('/_mock/scenarios', { target_id: A.deployment, scenario: 'slow' })).status,
    ).toBe(201)
    expect(
      (await post('/_mock/scenarios', { target_id: A.workflow, scenario: 'partial' })).status,
    ).toBe(201)
    const { db } = mock.deps
    expect([1, 2, 3, 4].map(() => takeScenario(db, A.deployment))).toEqual([
      'fail',
      'fail',
      'slow',
      undefined,
    ])
  })

  it('POST /_mock/scenarios answers 404 for an unknown target and 422 for an unknown or misapplied scenario', async () => {
    await expectEnvelope(
      await post('/_mock/scenarios', {
        target_id: '00000000-0000-4000-8000-000000000000',
        scenario: 'fail',
      }),
      'NOT_FOUND',
      404,
    )
    const body = await expectEnvelope(
      await post('/_mock/scenarios', { target_id: A.deployment, scenario: 'explode' }),
      'INVALID_INPUT',
      422,
    )
    expect(JSON.stringify(body)).toContain('succeed')
    await expectEnvelope(
      await post('/_mock/scenarios', { target_id: A.deployment, scenario: 'partial' }),
      'INVALID_INPUT',
      422,
    )
    await expectEnvelope(
      await post('/_mock/scenarios', { target_id: A.deployment, scenario: 'fail', times: 0 }),
      'INVALID_INPUT',
      422,
    )
  })

  it('GET /_mock/scenarios lists built-in and fixture scenarios and the queue', async () => {
    await post('/_mock/scenarios', {
      target_id: A.workflow,
      scenario: 'slow-then-succeed',
      times: 3,
    })
    const body = (await (await mock.app.request('/_mock/scenarios')).json()) as {
      builtin: { name: string }[]
      fixture: { name: string }[]
      queue: unknown[]
    }
    expect(body.builtin.map((s) => s.name)).toContain('missing-output')
    expect(body.fixture.map((s) => s.name)).toEqual(['slow-then-succeed'])
    expect(body.queue).toEqual([
      { target_id: A.workflow, scenario: 'slow-then-succeed', remaining: 3 },
    ])
  })
})
