/**
 * Stream fault rules (mock/faults/rules.ts applied by mock/events/sse.ts): a stream cut after some events,
 * an `event: error` frame (retryable or not by its code), repeated events, a stalled stream.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { openStreamCount } from '../events/sse.js'
import { readUntilEvent } from '../events/test-stream.js'
import { createMock, type Mock } from '../index.js'

const KEY = 'sk_test_a_full'
const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const H = { Authorization: `Bearer ${KEY}` }

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ rateLimits: false })
})
afterEach(() => mock.close())

/** A Session whose Turn has run to its end (several events stored). */
async function finishedSession(): Promise<string> {
  const res = await mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, 'Content-Type': 'application/json', 'Idempotency-Key': 'stream-faults' },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  const { session_id } = (await res.json()) as { session_id: string }
  await mock.clock.advance(10)
  return session_id
}

type Frame = { id?: string; event?: string; data?: string }

/** Reads what the stream sends until it closes or nothing more comes within a few macrotasks. */
async function readFrames(res: Response): Promise<{ frames: Frame[]; closed: boolean }> {
  const reader = res.body!.getReader()
  let text = ''
  let closed = false
  for (;;) {
    const next = await Promise.race([
      reader.read(),
      new Promise<'idle'>((r) => setTimeout(() => r('idle'), 50)),
    ])
    if (next === 'idle') break
    if (next.done) {
      closed = true
      break
    }
    text += new TextDecoder().decode(next.value)
  }
  if (!closed) await reader.cancel()
  const frames = text
    .split('\n\n')
    // Comments and the stream's opening `retry:` hint are not events.
    .filter((f) => f.trim() !== '' && !f.startsWith(':') && !/^retry:/.test(f))
    .map((f) => {
      const frame: Frame = {}
      for (const line of f.split('\n')) {
        const i = line.indexOf(':')
        const k = line.slice(0, i) as keyof Frame
        frame[k] = line.slice(i + 1).trim()
      }
      return frame
    })
  return { frames, closed }
}

const stream = (sessionId: string) =>
  mock.app.request(`/v1/sessions/${sessionId}/events`, {
    headers: { ...H, Accept: 'text/event-stream' },
  })

it('cuts the stream after the given number of events, without an error frame', async () => {
  const id = await finishedSession()
  const all = await readFrames(await stream(id))
  expect(all.frames.length).toBeGreaterThan(2)
  mock.faults.add({
    match: { operation: 'streamSessionEvents' },
    action: { stream: 'close', after_events: 2 },
  })
  const res = await stream(id)
  expect(res.headers.get('X-Mock-Fault')).toBe('fault_1')
  const cut = await readFrames(res)
  expect(cut.closed).toBe(true)
  expect(cut.frames.map((f) => f.id)).toEqual(all.frames.slice(0, 2).map((f) => f.id))
  expect(openStreamCount(mock.deps)).toBe(0)
})

it('[SSE-020] sends an error frame with the retryable flag of its code, then closes', async () => {
  const id = await finishedSession()
  mock.faults.add({
    match: { path: '/v1/sessions/*/events' },
    action: { stream: 'error', after_events: 1, code: 'STORAGE_UNAVAILABLE' },
    times: 1,
  })
  mock.faults.add({ match: {}, action: { stream: 'error' }, times: 1 })
  const retryable = await readFrames(await stream(id))
  expect(retryable.closed).toBe(true)
  expect(retryable.frames).toHaveLength(2)
  const errorFrame = retryable.frames[1]!
  expect(errorFrame.event).toBe('error')
  expect(errorFrame.id).toBeUndefined()
  expect(JSON.parse(errorFrame.data!)).toMatchObject({
    error: { code: 'STORAGE_UNAVAILABLE', retryable: true },
  })
  const fatal = await readFrames(await stream(id))
  expect(fatal.frames).toHaveLength(1)
  expect(JSON.parse(fatal.frames[0]!.data!)).toMatchObject({
    error: { code: 'INTERNAL_ERROR', retryable: false },
  })
  // Both rules spent: the next stream is whole.
  expect((await readFrames(await stream(id))).frames.every((f) => f.event !== 'error')).toBe(true)
})

it('[SSE-016] repeats every event after the first ones with the same id', async () => {
  const id = await finishedSession()
  const all = await readFrames(await stream(id))
  mock.faults.add({ match: {}, action: { stream: 'repeat', after_events: 1 } })
  const repeated = await readFrames(await stream(id))
  const ids = all.frames.map((f) => f.id)
  expect(repeated.frames.map((f) => f.id)).toEqual([ids[0], ...ids.slice(1).flatMap((x) => [x, x])])
})

it('stalls a stream: no further events and no keep-alive, the connection left open', async () => {
  const id = await finishedSession()
  mock.faults.add({ match: {}, action: { stream: 'stall', after_events: 1 }, times: 1 })
  const res = await stream(id)
  const reader = res.body!.getReader()
  // The stream opens with a `retry:` hint, then the one event before the stall.
  expect(await readUntilEvent(reader)).toMatch(/^id: /m)
  await mock.clock.advance(60)
  const next = await Promise.race([
    reader.read(),
    new Promise<'nothing'>((r) => setTimeout(() => r('nothing'), 50)),
  ])
  expect(next).toBe('nothing')
  expect(openStreamCount(mock.deps)).toBe(1)
  await reader.cancel()
  expect(openStreamCount(mock.deps)).toBe(0)
})
