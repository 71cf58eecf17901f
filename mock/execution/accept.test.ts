/** The Project's wait list before 429 CONCURRENCY_LIMIT is a fixture setting (assumed; default 10). */
import { expect, it } from 'vitest'
import { createMock } from '../index.js'
import { defaultWorld } from '../fixtures/test-worlds.js'

const D = 'aaaaaaaa-d000-4000-8000-000000000001'

it('[CONC-002] refuses the acceptance after max_waiting_executions wait with 429 CONCURRENCY_LIMIT', async () => {
  const lowered = defaultWorld()
  lowered.projects[0]!.max_waiting_executions = 1
  const mock = await createMock({ fixtures: lowered, rateLimits: false })
  await mock.app.request('/_mock/scenarios', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ target_id: D, scenario: 'slow', times: 5 }),
  })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) {
    const res = await mock.app.request(`/v1/deployments/${D}/sessions`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer sk_test_a_full',
        'Idempotency-Key': `w-${i}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } }),
    })
    statuses.push(res.status)
    if (res.status === 429)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
        'CONCURRENCY_LIMIT',
      )
  }
  // Two run, one waits, the fourth is beyond the limit.
  expect(statuses).toEqual([202, 202, 202, 429])
  mock.close()
})
