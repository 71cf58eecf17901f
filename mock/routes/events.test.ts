import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStreamCount } from '../events/sse.js'
import { createMock, type Mock } from '../index.js'

const A = { key: 'sk_test_a_full', deployment: 'aaaaaaaa-d000-4000-8000-000000000001' }
const C = { key: 'sk_test_c_full', deployment: 'cccccccc-d000-4000-8000-000000000001' }

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ rateLimits: false })
})
afterEach(() => mock.close())

let idem = 0
async function session(who: { key: string; deployment: string }): Promise<string> {
  const res = await mock.app.request(`/v1/deployments/${who.deployment}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${who.key}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `events-${++idem}`,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as { session_id: string }).session_id
}

const firstEventOf = (sessionId: string) =>
  (
    mock.deps.db.raw
      .prepare('SELECT event_id FROM events WHERE aggregate_id = ? ORDER BY sequence LIMIT 1')
      .get(sessionId) as { event_id: string }
  ).event_id

async function resume(sessionId: string, cursor: string) {
  const res = await mock.app.request(`/v1/sessions/${sessionId}/events`, {
    headers: {
      Authorization: `Bearer ${A.key}`,
      Accept: 'text/event-stream',
      'Last-Event-ID': cursor,
    },
  })
  const body = (await res.json()) as { error: { code: string; details: unknown } }
  return { status: res.status, code: body.error.code, details: body.error.details }
}

describe('SSE streams', () => {
  it("[SSE-015][SVC-002] answers another Project's event id exactly like an unknown one, another own Session's with 404", async () => {
    const mine = await session(A)
    const other = await session(A)
    const theirs = await session(C)
    await mock.clock.advance(10)
    const unknown = await resume(mine, '00000000-0000-4000-8000-000000000000')
    expect(unknown.status).toBe(400)
    expect(await resume(mine, firstEventOf(theirs))).toEqual(unknown)
    expect((await resume(mine, firstEventOf(other))).status).toBe(404)
  })

  it('[SSE-001] answers HEAD with the stream headers without opening a stream', async () => {
    const id = await session(A)
    for (let i = 0; i < 50; i++) {
      const res = await mock.app.request(`/v1/sessions/${id}/events`, {
        method: 'HEAD',
        headers: { Authorization: `Bearer ${A.key}`, Accept: 'text/event-stream' },
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    }
    expect(openStreamCount(mock.deps)).toBe(0)
  })
})
