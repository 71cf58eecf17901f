import { afterEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from './index.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'

const mocks: Mock[] = []
afterEach(() => {
  while (mocks.length) mocks.pop()!.close()
})

async function mock(): Promise<Mock> {
  const m = await createMock()
  mocks.push(m)
  return m
}

let idem = 0
function createSession(m: Mock) {
  return m.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `wiring-${++idem}`,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
}

/** What one instance has subscribed and scheduled: the same for every fresh instance. */
const footprint = (m: Mock) => ({
  executionListeners: m.deps.bus.execution.size,
  eventListeners: m.deps.bus.eventAppended.size,
  timerKinds: m.deps.scheduler.kinds.kinds().length,
  streams: m.deps.streams.streams.size,
})

describe('composition root', () => {
  it('gives 200 instances in one process the same wiring, none of it accumulated from the others', async () => {
    const first = await mock()
    const expected = footprint(first)
    expect(expected.executionListeners).toBeGreaterThan(0)
    expect(expected.eventListeners).toBeGreaterThan(0)
    for (let i = 0; i < 199; i++) {
      const m = await createMock()
      expect(footprint(m)).toEqual(expected)
      m.close()
    }
    // The first instance still has only its own listeners after 199 others were built.
    expect(footprint(first)).toEqual(expected)
  }, 60_000)

  it('[SVC-002] keeps Sessions, clocks and events of two instances apart', async () => {
    const a = await mock()
    const b = await mock()
    const res = await createSession(a)
    expect(res.status).toBe(202)
    const { session_id, turn_id } = (await res.json()) as { session_id: string; turn_id: string }
    await a.clock.advance(10)
    expect(a.clock.now().getTime() - b.clock.now().getTime()).toBe(10_000)
    const read = (m: Mock) =>
      m.app.request(`/v1/sessions/${session_id}/turns/${turn_id}`, {
        headers: { Authorization: `Bearer ${KEY}` },
      })
    expect(((await (await read(a)).json()) as { status: string }).status).toBe('SUCCEEDED')
    expect((await read(b)).status).toBe(404)
    const events = (m: Mock) =>
      m.deps.db.raw.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }
    expect(events(a).n).toBeGreaterThan(0)
    expect(events(b).n).toBe(0)
  })

  it('[RATE-001] counts Accept calls per instance: a full window in one leaves the other open', async () => {
    const a = await mock()
    const b = await mock()
    for (let i = 0; i < 10; i++) expect((await createSession(a)).status).not.toBe(429)
    expect((await createSession(a)).status).toBe(429)
    expect((await createSession(b)).status).toBe(202)
  })
})
