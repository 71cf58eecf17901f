/**
 * Issue #14: POST /_mock/scenarios also takes an inline script (validated like a fixture scenario), so a test
 * scripts a one-off execution without a fixture file.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'

let mock: Mock
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  mock.app.request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
const queue = (scenario: unknown, times?: number) =>
  post('/_mock/scenarios', { target_id: DEPLOYMENT, scenario, ...(times ? { times } : {}) })
const scenarios = async () =>
  (await (await mock.app.request('/_mock/scenarios')).json()) as {
    fixture: { name: string }[]
    queue: unknown[]
  }

async function turnAfter(seconds: number, idempotencyKey: string) {
  const created = await post(
    `/v1/deployments/${DEPLOYMENT}/sessions`,
    { input: [{ type: 'TEXT', text: 'go' }] },
    { Authorization: `Bearer ${KEY}`, 'Idempotency-Key': idempotencyKey },
  )
  expect(created.status).toBe(202)
  const { session_id, turn_id } = (await created.json()) as { session_id: string; turn_id: string }
  await mock.clock.advance(seconds)
  const res = await mock.app.request(`/v1/sessions/${session_id}/turns/${turn_id}`, {
    headers: { Authorization: `Bearer ${KEY}` },
  })
  return (await res.json()) as {
    status: string
    outputs?: { text?: string }[]
    error?: { code: string; message: string }
  }
}

const SCRIPT = {
  steps: [
    { at: 1, step: 'running' },
    { at: 2, step: 'fail', code: 'EXECUTION_TIMEOUT', message: 'scripted inline' },
  ],
}

describe('inline scenarios', () => {
  it('queues a script given inline; the next execution follows it', async () => {
    const res = await queue(SCRIPT)
    expect(res.status).toBe(201)
    const answer = (await res.json()) as { scenario: string; times: number }
    expect(answer.scenario).toMatch(/^inline-\d+$/)
    expect(answer.times).toBe(1)
    const turn = await turnAfter(2, 'one')
    expect(turn.status).toBe('FAILED')
    expect(turn.error?.code).toBe('EXECUTION_TIMEOUT')
    // Used once: the execution after it gets the default (succeed).
    expect((await turnAfter(5, 'two')).status).toBe('SUCCEEDED')
  })

  it('keeps a named inline script for later queueing by name, until a reset', async () => {
    expect((await queue({ name: 'my-timeout', ...SCRIPT })).status).toBe(201)
    expect((await queue('my-timeout')).status).toBe(201)
    expect((await scenarios()).queue).toHaveLength(2)
    await mock.reset()
    expect((await scenarios()).fixture.map((s) => s.name)).not.toContain('my-timeout')
    expect((await queue('my-timeout')).status).toBe(422)
  })

  it('refuses an invalid script with INVALID_INPUT 422 naming the problems, and keeps nothing', async () => {
    const before = await scenarios()
    for (const bad of [
      { steps: [] },
      { steps: [{ at: 1, step: 'explode' }] },
      {
        steps: [
          { at: 2, step: 'running' },
          { at: 1, step: 'succeed' },
        ],
      },
      { steps: [{ at: 1, step: 'fail', code: 'NOT_A_CODE' }] },
      { steps: [{ at: 1, step: 'succeed', extra: true }] },
      { steps: [{ at: 1, step: 'succeed' }], colour: 'red' },
      { name: 'Not Valid', steps: [{ at: 1, step: 'succeed' }] },
      { name: 'succeed', steps: [{ at: 1, step: 'succeed' }] },
      // Applies to Workflows only, queued on a Deployment.
      { applies_to: ['workflow'], steps: [{ at: 1, step: 'succeed' }] },
    ]) {
      const res = await queue(bad)
      expect(res.status, JSON.stringify(bad)).toBe(422)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
    }
    expect(await scenarios()).toEqual(before)
  })
})
