/** The package's main entry (issue #14): createMock's narrow surface, scenarios and the request journal. */
import { afterEach, describe, expect, it } from 'vitest'
import { createMock, MockControlError, type MockServer } from './public.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'

const open: MockServer[] = []
afterEach(() => {
  for (const m of open.splice(0)) m.close()
})
async function start(options: Parameters<typeof createMock>[0] = {}) {
  const mock = await createMock(options)
  open.push(mock)
  return mock
}
const api = (mock: MockServer, path: string, init: RequestInit = {}) =>
  mock.fetch(
    new Request(`http://mock${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${KEY}`,
        'Content-Type': 'application/json',
        ...init.headers,
      },
    }),
  )

describe('createMock (package entry)', () => {
  it('exposes only the documented surface: no app, no internal deps', async () => {
    const mock = await start()
    expect(Object.keys(mock).sort()).toEqual([
      'clearRequests',
      'clock',
      'close',
      'faults',
      'fetch',
      'fixtures',
      'listen',
      'requests',
      'reset',
      'scenarios',
      'webhooks',
    ])
  })

  it('queues named and inline scenarios, and rejects a bad one with MockControlError (422)', async () => {
    const mock = await start({ controlToken: 'ctl-secret' })
    expect(await mock.scenarios.queue(DEPLOYMENT, 'fail', 2)).toEqual({
      target_id: DEPLOYMENT,
      target: 'deployment',
      scenario: 'fail',
      times: 2,
    })
    const inline = await mock.scenarios.queue(DEPLOYMENT, {
      steps: [{ at: 1, step: 'succeed' }],
    })
    expect(inline.scenario).toMatch(/^inline-/)
    const refused = await mock.scenarios.queue(DEPLOYMENT, 'no-such-scenario').catch((e) => e)
    expect(refused).toBeInstanceOf(MockControlError)
    expect((refused as MockControlError).status).toBe(422)
  })

  it('requests() lists what the mock received; clearRequests() and reset() empty it', async () => {
    const mock = await start()
    await api(mock, `/v1/deployments/${DEPLOYMENT}/sessions`, {
      method: 'POST',
      headers: { 'Idempotency-Key': 'k-1' },
      body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hi' }] }),
    })
    expect(mock.requests()).toMatchObject([
      { method: 'POST', operation: 'createSession', status: 202, idempotency_key: 'k-1' },
    ])
    mock.clearRequests()
    expect(mock.requests()).toEqual([])
    await api(mock, '/v1/deployments')
    await mock.reset()
    expect(mock.requests()).toEqual([])
  })

  it('listen() serves over HTTP and gives only the url and close()', async () => {
    const mock = await start()
    const served = await mock.listen()
    expect(Object.keys(served).sort()).toEqual(['close', 'url'])
    const res = await fetch(`${served.url}/_mock/health`)
    expect(await res.json()).toEqual({ status: 'ok' })
    await served.close()
  })
})
