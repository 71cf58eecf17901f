/**
 * Unit tests of the SSE stream module on an in-process mock (no socket): bounded buffer and the slow-consumer
 * disconnect, post-commit delivery, keep-alive coalescing over a long advance, and cleanup on cancel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { appendEvent } from './log.js'
import { openStreamCount, type SseLimits } from './sse.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
const H = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ clock: 'manual', rateLimits: false })
})
afterEach(() => {
  mock.close()
})

/** Replaces the test's mock with one whose streams have these limits. */
async function withLimits(sseLimits: Partial<SseLimits>): Promise<void> {
  mock.close()
  mock = await createMock({ clock: 'manual', rateLimits: false, sseLimits })
}

async function newSession(): Promise<string> {
  const res = await mock.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
    method: 'POST',
    headers: {
      ...H,
      'Idempotency-Key': `k-${Math.round(mock.clock.now().getTime())}-${Math.random()}`,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as { session_id: string }).session_id
}

/** Opens a stream and reads past its first frame, the reconnection hint. */
async function open(sessionId: string): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const res = await mock.app.request(`/v1/sessions/${sessionId}/events`, { headers: H })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const { value } = await reader.read()
  expect(new TextDecoder().decode(value)).toMatch(/^retry: \d+\n\n$/)
  return reader
}

/** Appends `n` public message events of `bytes` characters to a Session, in one transaction. */
function appendMessages(sessionId: string, n: number, bytes: number): void {
  const { deps } = mock
  deps.db.tx(() => {
    for (let i = 0; i < n; i++)
      appendEvent(deps, {
        aggregate_kind: 'SESSION',
        aggregate_id: sessionId,
        project_id: 'aaaaaaaa-0000-4000-8000-000000000000',
        session_id: sessionId,
        type: 'message.created',
        data: { kind: 'MESSAGE', text: 'x'.repeat(bytes), visibility: 'INTERMEDIATE' },
      })
  })
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('SSE stream module', () => {
  it('stops buffering at its bound and disconnects a consumer that does not read in time', async () => {
    await withLimits({ bufferBytes: 16 * 1024, sendLimitMs: 50 })
    const sessionId = await newSession()
    const reader = await open(sessionId)
    appendMessages(sessionId, 100, 1024)
    await settle()
    expect(openStreamCount(mock.deps)).toBe(1)
    // Bounded wait for the wall-clock send limit to pass (no timing is asserted).
    for (let i = 0; i < 100 && openStreamCount(mock.deps) > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    expect(openStreamCount(mock.deps)).toBe(0)
    // What was buffered is bounded; then the body errors (the HTTP server drops the connection).
    let received = 0
    await expect(
      (async () => {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) return
          received += value.byteLength
        }
      })(),
    ).rejects.toThrow(/too slow/)
    expect(received).toBeLessThan(mock.deps.streams.limits.bufferBytes + 2 * 1024)
  })

  it('keeps a consumer that reads within the send limit and delivers everything in order', async () => {
    await withLimits({ bufferBytes: 16 * 1024 })
    const sessionId = await newSession()
    const reader = await open(sessionId)
    appendMessages(sessionId, 100, 1024)
    let text = ''
    const decoder = new TextDecoder()
    while ((text.match(/^id: /gm) ?? []).length < 100) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    const sequences = [...text.matchAll(/"sequence":(\d+)/g)].map((m) => Number(m[1]))
    expect(sequences).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    expect(openStreamCount(mock.deps)).toBe(1)
    await reader.cancel()
    expect(openStreamCount(mock.deps)).toBe(0)
  })

  it('does not deliver an event whose transaction rolled back', async () => {
    const sessionId = await newSession()
    const reader = await open(sessionId)
    expect(() =>
      mock.deps.db.tx(() => {
        appendMessages(sessionId, 1, 10)
        throw new Error('rollback')
      }),
    ).toThrow('rollback')
    appendMessages(sessionId, 1, 3)
    const { value } = await reader.read()
    const text = new TextDecoder().decode(value)
    expect(text).toContain('"text":"xxx"')
    expect(text).toContain('"sequence":1')
    await reader.cancel()
  })

  it('sends one keep-alive per stream over one long advance and keeps the timer queue small', async () => {
    const sessionId = await newSession()
    const reader = await open(sessionId)
    await mock.clock.advance(24 * 60 * 60)
    await settle()
    const decoder = new TextDecoder()
    let text = ''
    for (;;) {
      const next = await Promise.race([
        reader.read(),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)),
      ])
      if (!next || next.done) break
      text += decoder.decode(next.value)
      if (text.includes('turn.completed') && text.includes(': keep-alive')) break
    }
    expect(text.match(/: keep-alive/g)?.length).toBe(1)
    // The next keep-alive is one timer row, 15 s after the advance.
    const due = mock.deps.scheduler.nextDueMs()
    expect(due).toBe(mock.clock.now().getTime() + 15_000)
    await reader.cancel()
    expect(mock.deps.scheduler.pending()).toBe(0)
  })

  it('closes the stream with an error frame when the key is revoked', async () => {
    const sessionId = await newSession()
    const reader = await open(sessionId)
    mock.deps.db.stmt('UPDATE api_keys SET revoked = 1 WHERE key = ?').run(KEY)
    await mock.clock.advance(15)
    const decoder = new TextDecoder()
    let text = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    expect(text).toMatch(/event: error\ndata: \{"error":\{"code":"INVALID_API_KEY"/)
    expect(text).not.toMatch(/^id: .*\n(?=event: error)/m)
    expect(openStreamCount(mock.deps)).toBe(0)
  })
})

describe('reconnection hint (issue #14, x-assumed)', () => {
  it('starts every stream with a retry: frame carrying the instance limit, before any event', async () => {
    await withLimits({ retryMs: 250 })
    const sessionId = await newSession()
    await mock.clock.advance(10)
    const res = await mock.app.request(`/v1/sessions/${sessionId}/events`, { headers: H })
    const reader = res.body!.getReader()
    const { value } = await reader.read()
    expect(new TextDecoder().decode(value)).toBe('retry: 250\n\n')
    const next = new TextDecoder().decode((await reader.read()).value)
    expect(next).toMatch(/^id: /)
    await reader.cancel()
  })
})
