/**
 * Forward-compatibility rehearsal (Versioning 2; mock/domain/forward-compat.ts): the start option and the
 * control call add unknown response fields, an unknown event type with an unknown content kind, and unknown
 * codes for retryable errors, keeping everything else as it was.
 */
import { afterEach, expect, it } from 'vitest'
import { readUntilEvent } from '../events/test-stream.js'
import { createMock, type Mock } from '../index.js'

const KEY = 'sk_test_a_full'
const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const H = { Authorization: `Bearer ${KEY}` }
const JSON_H = { 'Content-Type': 'application/json' }

let mock: Mock
afterEach(() => mock.close())

const switchTo = (enabled: boolean) =>
  mock.app.request('/_mock/forward-compat', {
    method: 'POST',
    headers: JSON_H,
    body: JSON.stringify({ enabled }),
  })
const json = async (res: Response) => (await res.json()) as Record<string, unknown>
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose JSON answers
const strip = (v: any): any =>
  Array.isArray(v)
    ? v.map(strip)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v).flatMap(([k, x]) => (k === 'forecast' ? [] : [[k, strip(x)]])),
        )
      : v

it('[VER-003] adds an unknown field at the top level and one level down, and nothing else', async () => {
  mock = await createMock()
  const plain = await json(await mock.app.request('/v1/deployments', { headers: H }))
  expect(JSON.stringify(plain)).not.toContain('forecast')
  expect((await switchTo(true)).status).toBe(200)
  const future = await json(await mock.app.request('/v1/deployments', { headers: H }))
  expect(future.forecast).toMatchObject({ added_in: expect.any(String) })
  for (const item of future.items as Record<string, unknown>[]) expect(item.forecast).toBeDefined()
  expect(strip(future)).toEqual(plain)
  await switchTo(false)
  expect(await json(await mock.app.request('/v1/deployments', { headers: H }))).toEqual(plain)
})

it('[VER-003] appends an unknown event type with an unknown content kind that resumes like any event', async () => {
  mock = await createMock({ forwardCompat: true, rateLimits: false })
  const created = await mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, ...JSON_H, 'Idempotency-Key': 'fc-1' },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  const receipt = await json(created)
  expect(receipt.forecast).toBeDefined()
  const sessionId = receipt.session_id as string
  await mock.clock.advance(10)
  const items = (await json(
    await mock.app.request(`/v1/sessions/${sessionId}/items`, { headers: H }),
  )) as { items: { id: string; content: { kind: string } }[] }
  const insight = items.items.find((i) => i.content.kind === 'INSIGHT')
  expect(insight).toBeDefined()
  // The turn still succeeds and its events follow as before.
  const turn = await json(await mock.app.request(receipt.status_url as string, { headers: H }))
  expect(turn.status).toBe('SUCCEEDED')
  // Resuming after the unknown event works (it is a real event with an id and a sequence).
  const res = await mock.app.request(`/v1/sessions/${sessionId}/events`, {
    headers: { ...H, Accept: 'text/event-stream', 'Last-Event-ID': insight!.id },
  })
  expect(res.status).toBe(200)
  // The first event frame after the stream's opening `retry:` hint.
  const reader = res.body!.getReader()
  const text = await readUntilEvent(reader)
  await reader.cancel()
  const first = text.slice(text.search(/^id: /m))
  expect(first).toMatch(/^id: /)
  expect(first).not.toContain(insight!.id)
  // A reset brings back the start value (on).
  await mock.reset()
  expect(await json(await mock.app.request('/_mock/forward-compat'))).toEqual({ enabled: true })
})

it('[VER-003][ERR-012] answers a retryable error with an unknown code of the same status, retryable and Retry-After', async () => {
  mock = await createMock({ forwardCompat: true })
  mock.faults.add({ match: {}, action: { error: 'RATE_LIMITED', retry_after_s: 4 }, times: 1 })
  mock.faults.add({ match: {}, action: { error: 'STORAGE_UNAVAILABLE' }, times: 1 })
  mock.faults.add({ match: {}, action: { error: 'NOT_FOUND' }, times: 1 })
  const limited = await mock.app.request('/v1/deployments', { headers: H })
  expect(limited.status).toBe(429)
  expect(limited.headers.get('Retry-After')).toBe('4')
  const body = (await limited.json()) as { error: Record<string, unknown> }
  expect(body.error).toMatchObject({ code: 'REQUEST_BUDGET_PAUSED', retryable: true })
  expect((body.error.details as Record<string, unknown>).reset_at).toBeDefined()
  const unavailable = await mock.app.request('/v1/deployments', { headers: H })
  expect(unavailable.status).toBe(503)
  expect(((await unavailable.json()) as { error: { code: string } }).error.code).toBe(
    'CAPACITY_REBALANCING',
  )
  // A non-retryable error keeps its code (the client branches on it).
  const absent = await mock.app.request('/v1/deployments', { headers: H })
  expect(((await absent.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
})

it('refuses a bad control body with INVALID_INPUT 422', async () => {
  mock = await createMock()
  const res = await mock.app.request('/_mock/forward-compat', {
    method: 'POST',
    headers: JSON_H,
    body: JSON.stringify({ enabled: 'yes' }),
  })
  expect(res.status).toBe(422)
})
