/* global Request */
// An SDK's test file in its own project: `npm install ai-employee-mock vitest`, then `npx vitest run`.
// The mock runs in the test's process (no port, no child process) on a manual virtual clock.
import { createMock } from 'ai-employee-mock'
import { afterAll, beforeEach, expect, test } from 'vitest'

const KEY = 'sk_test_a_full' // the default fixture world's key with every scope (Project A)
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'

const mock = await createMock({ seed: 'my-sdk-tests' })
afterAll(() => mock.close())
beforeEach(() => mock.reset())

/** One call of the service's API, as an SDK would send it (here through the mock's fetch handler). */
async function call(method, path, body, headers = {}) {
  const res = await mock.fetch(
    new Request(`http://mock${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return { status: res.status, body: await res.json() }
}

async function startTurn(text) {
  const created = await call(
    'POST',
    `/v1/deployments/${DEPLOYMENT}/sessions`,
    { input: [{ type: 'TEXT', text }] },
    { 'Idempotency-Key': `key-${text}` },
  )
  expect(created.status).toBe(202)
  return created.body
}

test('a Turn succeeds once the virtual clock has moved', async () => {
  const { session_id, turn_id } = await startTurn('summarise')
  await mock.clock.advance(5)
  const turn = await call('GET', `/v1/sessions/${session_id}/turns/${turn_id}`)
  expect(turn.body.status).toBe('SUCCEEDED')
})

test('a queued scenario makes the next Turn fail', async () => {
  await mock.scenarios.queue(DEPLOYMENT, 'fail')
  const { session_id, turn_id } = await startTurn('this one fails')
  await mock.clock.advance(5)
  const turn = await call('GET', `/v1/sessions/${session_id}/turns/${turn_id}`)
  expect(turn.body.status).toBe('FAILED')
  expect(turn.body.error.code).toBe('EXECUTION_FAILED')
})

test('ids repeat after a reset: the same test sequence gives the same ids', async () => {
  const first = await startTurn('same')
  await mock.reset()
  expect(await startTurn('same')).toMatchObject({
    session_id: first.session_id,
    turn_id: first.turn_id,
  })
})

test('the request journal shows what the client sent: a resend with the same Idempotency-Key', async () => {
  await startTurn('twice')
  await startTurn('twice')
  const sent = mock.requests().filter((r) => r.operation === 'createSession')
  expect(sent.map((r) => [r.idempotency_key, r.status])).toEqual([
    ['key-twice', 202],
    ['key-twice', 202],
  ])
})
