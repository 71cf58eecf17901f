/**
 * SSE streams (Events > SSE streams; Authentication 6): standard frames read from raw HTTP and by a standard
 * EventSource client, live delivery as virtual time moves, keep-alive comments, resume by Last-Event-ID or
 * after, cursor errors (400, 404, 410 with recovery details), error frames and closing on lost permission.
 */
import { randomUUID } from 'node:crypto'
import { EventSource } from 'eventsource'
import { afterAll, afterEach, describe, expect, it, type TestContext } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { waitUntilEnded } from '../../support/poll.js'
import { assumedRule, mockOnly, role } from '../../support/skip.js'
import { expectDocumentedFields } from '../../support/unknown-fields.js'
import { useTarget } from '../../support/use-target.js'
import {
  addTurn,
  DAY_S,
  endedSession,
  endEventType,
  newRun,
  newSession,
  readTurn,
  unthrottled,
  UUID,
} from './flow.js'
import {
  closeAllStreams,
  eventOf,
  fieldNames,
  openRaw,
  track,
  type RawStream,
  type SseFrame,
} from './sse-support.js'

const target = useTarget()
afterAll(() => {
  closeAllStreams()
})
afterEach(() => {
  closeAllStreams()
})

const eventsPath = (sessionId: string) => `/v1/sessions/${sessionId}/events`
const hasType = (type: string) => (s: RawStream) => s.events().some((f) => f.event === type)
const EVENT_FIELDS = [
  'event_id',
  'aggregate_kind',
  'aggregate_id',
  'sequence',
  'type',
  'created_at',
  'data',
]

/** Opens the Session stream with the full key and checks it is an SSE 200. */
async function stream(sessionId: string, headers: Record<string, string> = {}, query = '') {
  const s = await openRaw(target.baseUrl, `${eventsPath(sessionId)}${query}`, {
    key: target.world.keys.full,
    headers,
  })
  expect(s.status, s.text()).toBe(200)
  return s
}

/** A Session whose first Turn has ended (`succeed`: RUNNING 1 s, TEXT output 4 s, SUCCEEDED 5 s). */
async function finishedSession() {
  const control = target.control!
  const receipt = await newSession(target)
  await control.advance(6)
  return receipt
}

/**
 * A Session whose first Turn has ended (mock: virtual time; real target: polled, see endedSession), with the
 * event type that ends its replay; skipped when it ended in a way whose event type the document does not name.
 */
async function endedWithEvents(ctx: TestContext) {
  const receipt = await endedSession(target)
  const end = endEventType(receipt.status)
  if (!end)
    ctx.skip(`the Turn ended ${receipt.status}: the document names no event type for that end`)
  return { receipt, replayed: hasType(end) }
}

/**
 * SSE-005, SSE-006, SSE-008: every frame has id, event and one data line (in any order: the standard gives the
 * order of fields no meaning; the mock writes id, event, data) of an Event of this Session.
 */
async function expectStandardFrames(frames: SseFrame[], sessionId: string, outcome: string) {
  for (const f of frames) {
    expect([...fieldNames(f)].sort()).toEqual(['data', 'event', 'id'])
    await mockChoice(target, 'SSE fields in the order id, event, data', () =>
      expect(fieldNames(f)).toEqual(['id', 'event', 'data']),
    )
    expect(f.id).toMatch(UUID)
    const e = eventOf(f)
    expect(Object.keys(e)).toEqual(expect.arrayContaining(EVENT_FIELDS))
    expectDocumentedFields('#/components/schemas/Event', e, 'SSE event')
    expect(e.event_id).toBe(f.id)
    expect(e.type).toBe(f.event)
    expect(e.aggregate_kind).toBe('SESSION')
    expect(e.aggregate_id).toBe(sessionId)
    expect(Number.isInteger(e.sequence)).toBe(true)
    expect(Number.isNaN(Date.parse(String(e.created_at)))).toBe(false)
    expect(typeof e.data.kind).toBe('string')
    // EVT-001: the stream's outcome is the Turn's status.
    if (e.data.kind === 'OUTCOME') expect(e.data.status).toBe(outcome)
  }
}

describe('SSE streams', () => {
  it(`${req('SSE-001')} answers 403 INSUFFICIENT_SCOPE to a key without events:read`, async (ctx) => {
    const key = role(ctx, target.world.keys.worksOnly, 'key without events:read')
    const res = await target.api.get(eventsPath(randomUUID()), { key })
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('SSE-002')} answers 403 INSUFFICIENT_SCOPE on a Run stream to a key lacking the scopes`, async (ctx) => {
    const key = role(ctx, target.world.keys.worksOnly, 'key without events:read and runs:read')
    const res = await target.api.get(`/v1/runs/${randomUUID()}/events`, { key })
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('SSE-003', 'SSE-005', 'SSE-006', 'SSE-008')} delivers standard frames live as the Turn runs`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    const receipt = await newSession(target)
    const s = await stream(receipt.session_id)
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/)
    await control.advance(6)
    await s.waitFor(hasType('turn.completed'), 'turn.completed')
    const frames = s.events()
    expect(frames.map((f) => f.event)).toContain('message.created')
    await expectStandardFrames(frames, receipt.session_id, 'SUCCEEDED')
  })

  it(`${req('SSE-003', 'SSE-005', 'SSE-006', 'SSE-008', 'EVT-001')} replays an ended Turn's events as standard frames, its outcome as in the Turn detail`, async (ctx) => {
    const { receipt, replayed } = await endedWithEvents(ctx)
    const s = await stream(receipt.session_id)
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/)
    await s.waitFor(replayed, 'the stored events')
    const frames = s.events()
    await expectStandardFrames(frames, receipt.session_id, receipt.status)
    // SSE-016 lets an event arrive twice (events() drops the repeats); the mock sends each once.
    await mockChoice(target, 'each SSE event sent once', () =>
      expect(s.allEvents()).toHaveLength(frames.length),
    )
    const sequences = frames.map((f) => eventOf(f).sequence as number)
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
  })

  it(`${req('EVT-001')} reports the same outcome status on the stream as in the Turn detail`, async (ctx) => {
    const control = mockOnly(ctx, target, 'queues a scenario')
    await control.queueScenario(target.world.deployments.active, 'fail')
    const receipt = await newSession(target)
    const s = await stream(receipt.session_id)
    await control.advance(10)
    await s.waitFor(hasType('turn.failed'), 'turn.failed')
    const outcome = eventOf(s.events().find((f) => f.event === 'turn.failed')!)
    const turn = await readTurn(target, receipt.session_id, receipt.turn_id)
    expect(outcome.data.status).toBe(turn.status)
    expect((outcome.data.error as { code: string }).code).toBe('EXECUTION_FAILED')
  })

  it(`${req('SSE-009', 'SSE-010')} sends a keep-alive comment after 15 s of virtual time`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    const receipt = await finishedSession()
    const s = await stream(receipt.session_id)
    await s.waitFor(hasType('turn.completed'), 'the stored events')
    expect(s.text()).not.toContain(': keep-alive')
    await control.advance(15)
    const isKeepAlive = (f: SseFrame) => f.comments.some((c) => c.startsWith('keep-alive'))
    await s.waitFor((x) => x.frames().some(isKeepAlive), 'a keep-alive comment')
    const comment = s.frames().find(isKeepAlive)!
    expect(comment.lines).toEqual([': keep-alive'])
    expect(comment.id).toBeUndefined()
  })

  it(`${req('SSE-006', 'SSE-011')} numbers a Session's events with increasing sequence across Turns`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    const receipt = await finishedSession()
    await addTurn(target, receipt.session_id)
    await control.advance(6)
    const s = await stream(receipt.session_id)
    await s.waitFor(
      (x) => x.events().filter((f) => f.event === 'turn.completed').length === 2,
      'two outcomes',
    )
    const events = s.events().map(eventOf)
    const sequences = events.map((e) => e.sequence as number)
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
    expect(new Set(sequences).size).toBe(sequences.length)
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length)
  })

  it(`${req('SSE-012')} resumes after the Last-Event-ID event`, async (ctx) => {
    const { receipt, replayed } = await endedWithEvents(ctx)
    const all = await stream(receipt.session_id)
    await all.waitFor(replayed, 'the stored events')
    const ids = all.events().map((f) => f.id!)
    expect(ids.length).toBeGreaterThanOrEqual(2)
    const resumed = await stream(receipt.session_id, { 'Last-Event-ID': ids[0]! })
    await resumed.waitFor(replayed, 'the events after the cursor')
    expect(resumed.events().map((f) => f.id)).toEqual(ids.slice(1))
  })

  it(`${req('SSE-013')} resumes after the event named by query after`, async (ctx) => {
    const { receipt, replayed } = await endedWithEvents(ctx)
    const all = await stream(receipt.session_id)
    await all.waitFor(replayed, 'the stored events')
    const ids = all.events().map((f) => f.id!)
    expect(ids.length).toBeGreaterThanOrEqual(3)
    const resumed = await stream(receipt.session_id, {}, `?after=${ids[1]}`)
    await resumed.waitFor(replayed, 'the events after the cursor')
    expect(resumed.events().map((f) => f.id)).toEqual(ids.slice(2))
    // The same id in both places is one cursor.
    const both = await stream(receipt.session_id, { 'Last-Event-ID': ids[1]! }, `?after=${ids[1]}`)
    await both.waitFor(replayed, 'the events after the cursor')
    expect(both.events().map((f) => f.id)).toEqual(ids.slice(2))
  })

  it(`${req('SSE-014', 'ERR-038')} answers 400 INVALID_CURSOR when Last-Event-ID and after differ`, async (ctx) => {
    const { receipt, replayed } = await endedWithEvents(ctx)
    const all = await stream(receipt.session_id)
    await all.waitFor(replayed, 'the stored events')
    const [first, second] = all.events().map((f) => f.id!)
    const res = await target.api.get(eventsPath(receipt.session_id), {
      key: target.world.keys.full,
      headers: { 'Last-Event-ID': first! },
      query: { after: second! },
    })
    expectError(res, 'INVALID_CURSOR')
  })

  it(`${req('ERR-038')} answers 400 INVALID_CURSOR to a cursor that is not an event id`, async () => {
    const receipt = await newSession(target)
    for (const opts of [
      { headers: { 'Last-Event-ID': 'not-an-id' } },
      { query: { after: '42' } },
    ]) {
      const res = await target.api.get(eventsPath(receipt.session_id), {
        key: target.world.keys.full,
        ...opts,
      })
      expectError(res, 'INVALID_CURSOR')
    }
  })

  it(`${req('ERR-038', 'SSE-013')} names the parameter it refuses: an unknown well-formed cursor in after is details.parameter "after"`, async (ctx) => {
    assumedRule(ctx, target, 'details.parameter and INVALID_CURSOR for an unknown well-formed id')
    const receipt = await newSession(target)
    const unknown = randomUUID()
    const viaQuery = await target.api.get(eventsPath(receipt.session_id), {
      key: target.world.keys.full,
      query: { after: unknown },
    })
    expectError(viaQuery, 'INVALID_CURSOR', { details: { parameter: 'after' } })
    const viaHeader = await target.api.get(eventsPath(receipt.session_id), {
      key: target.world.keys.full,
      headers: { 'Last-Event-ID': unknown },
    })
    expectError(viaHeader, 'INVALID_CURSOR', { details: { parameter: 'Last-Event-ID' } })
  })

  it(`${req('SSE-015')} answers 404 to an event id of another Session`, async (ctx) => {
    const { receipt: a, replayed } = await endedWithEvents(ctx)
    const b = await newSession(target, 'Another session.')
    const s = await stream(a.session_id)
    await s.waitFor(replayed, 'the stored events')
    const idOfA = s.events()[0]!.id!
    for (const opts of [{ headers: { 'Last-Event-ID': idOfA } }, { query: { after: idOfA } }]) {
      const res = await target.api.get(eventsPath(b.session_id), {
        key: target.world.keys.full,
        ...opts,
      })
      expectError(res, 'NOT_FOUND')
    }
  })

  it(`${req('SSE-017', 'SSE-018', 'EVT-003', 'RET-013')} answers 410 EVENT_CURSOR_EXPIRED with recovery addresses for a cursor past 30 days`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time by weeks')
    const receipt = await finishedSession()
    const s = await stream(receipt.session_id)
    await s.waitFor(hasType('turn.completed'), 'the stored events')
    const oldId = s.events()[0]!.id!
    s.close()
    // Keep the Session active (idle retention counts from the last Turn) while the old events expire.
    await control.advance(20 * DAY_S)
    const second = await addTurn(target, receipt.session_id)
    await control.advance(11 * DAY_S)
    const res = await target.api.get(eventsPath(receipt.session_id), {
      key: target.world.keys.full,
      headers: { 'Last-Event-ID': oldId },
    })
    const error = expectError(res, 'EVENT_CURSOR_EXPIRED')
    expect(error.details.content_expired).toBeUndefined()
    const { state_url, items_url } = error.details as { state_url: string; items_url: string }
    expect(state_url).toMatch(/^\//)
    expect(items_url).toMatch(/^\//)
    // Recovery: state, then items (the expired records hidden), then the stream without a cursor.
    const state = await unthrottled(target, () =>
      target.api.get(state_url, { key: target.world.keys.full }),
    )
    expect(state.status, state.text).toBe(200)
    const items = await unthrottled(target, () =>
      target.api.get(items_url, { key: target.world.keys.full }),
    )
    expect(items.status, items.text).toBe(200)
    const page = items.body as { items: { id: string; turn_id: string }[] }
    expect(page.items.map((i) => i.id)).not.toContain(oldId)
    expect(page.items.every((i) => i.turn_id === second.turn_id)).toBe(true)
    const fresh = await stream(receipt.session_id)
    await fresh.waitFor(hasType('turn.completed'), 'the retained events')
    expect(fresh.events().map((f) => f.id)).not.toContain(oldId)
  })

  it(`${req('SSE-019', 'RET-003')} adds content_expired true when the Session itself is past retention`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time by weeks')
    const receipt = await finishedSession()
    const s = await stream(receipt.session_id)
    await s.waitFor(hasType('turn.completed'), 'the stored events')
    const id = s.events()[0]!.id!
    s.close()
    await control.advance(31 * DAY_S)
    const res = await target.api.get(eventsPath(receipt.session_id), {
      key: target.world.keys.full,
      query: { after: id },
    })
    const error = expectError(res, 'EVENT_CURSOR_EXPIRED')
    expect(error.details).toMatchObject({ content_expired: true })
    expect(typeof error.details.state_url).toBe('string')
    expect(typeof error.details.items_url).toBe('string')
    // Without a cursor the expired Session is simply gone.
    expectError(
      await target.api.get(eventsPath(receipt.session_id), { key: target.world.keys.full }),
      'SESSION_EXPIRED',
    )
  })

  it(`${req('SSE-004')} lets the Turn finish after the stream is dropped`, async () => {
    const receipt = await newSession(target)
    const s = await stream(receipt.session_id)
    s.close()
    // Closing the stream does not cancel the work: the Turn runs to its own end.
    const status = await waitUntilEnded(target, receipt.status_url, { mockAdvanceS: 6 })
    expect(status).not.toBe('CANCELED')
    if (target.control) expect(status).toBe('SUCCEEDED')
  })

  it(`${req('SSE-020', 'AUTH-010')} ends the stream with an error frame when the Session is deleted`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    await control.queueScenario(target.world.deployments.active, 'slow')
    const receipt = await newSession(target)
    const s = await stream(receipt.session_id)
    await control.advance(2)
    await s.waitFor(hasType('turn.progress'), 'turn.progress')
    const del = await unthrottled(target, () =>
      target.api.delete(
        `/v1/sessions/${receipt.session_id}`,
        {},
        {
          key: target.world.keys.full,
          idem: `events-${randomUUID()}`,
        },
      ),
    )
    expect(del.status, del.text).toBe(202)
    await control.advance(15)
    await s.waitEnd()
    const last = s.frames().at(-1)!
    expect(last.event).toBe('error')
    expect(last.id).toBeUndefined()
    const envelope = JSON.parse(last.data!) as { error: Record<string, unknown> }
    expect(Object.keys(envelope.error)).toEqual(
      expect.arrayContaining(['code', 'details', 'message', 'request_id', 'retryable']),
    )
    expectDocumentedFields('#/components/schemas/ErrorEnvelope', envelope, 'SSE error frame')
    expect(envelope.error.code).toBe('NOT_FOUND')
    expect(envelope.error.request_id).toBe(s.headers['x-request-id'])
  })

  it(`${req('AUTH-010')} closes the stream when its key is revoked`, async (ctx) => {
    const control = mockOnly(ctx, target, 'revokes a key through the control API')
    const key = role(ctx, target.world.keys.oneDeployment, 'a second full-scope key')
    const receipt = await newSession(target, 'Revoke me.', key)
    const s = await openRaw(target.baseUrl, eventsPath(receipt.session_id), { key })
    expect(s.status).toBe(200)
    const revoke = await target.api.post(`/_mock/keys/${key}/revoke`, {}, { check: false })
    if (revoke.status === 404 && !/key/i.test(revoke.text))
      ctx.skip('no key revocation control route')
    expect(revoke.status, revoke.text).toBe(200)
    await control.advance(15)
    await s.waitEnd()
    const last = s.frames().at(-1)!
    expect(last.event).toBe('error')
    expect((JSON.parse(last.data!) as { error: { code: string } }).error.code).toBe(
      'INVALID_API_KEY',
    )
  })

  it(`${req('SSE-003', 'SSE-012', 'SSE-016')} works with a standard EventSource client`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    const receipt = await newSession(target)
    const key = target.world.keys.full
    const es = track(
      new EventSource(`${target.baseUrl}${eventsPath(receipt.session_id)}`, {
        fetch: (url, init) =>
          fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${key}` } }),
      }),
    )
    const seen = new Map<string, Record<string, unknown>>()
    let lastEventId = ''
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no turn.completed from EventSource')), 5000)
      for (const type of ['turn.progress', 'message.created', 'turn.completed']) {
        es.addEventListener(type, (ev) => {
          seen.set(ev.lastEventId, JSON.parse(ev.data) as Record<string, unknown>)
          lastEventId = ev.lastEventId
          if (type === 'turn.completed') {
            clearTimeout(timer)
            resolve()
          }
        })
      }
    })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('EventSource did not open')), 5000)
      es.addEventListener('open', () => {
        clearTimeout(timer)
        resolve()
      })
    })
    await control.advance(6)
    await done
    es.close()
    expect([...seen.values()].map((e) => e.type)).toEqual([
      'turn.progress',
      'message.created',
      'turn.completed',
    ])
    for (const [id, e] of seen) expect(e.event_id).toBe(id)
    expect(lastEventId).toBe([...seen.keys()].at(-1))
  })

  it(`${req('SSE-003', 'SSE-006', 'SSE-008')} streams a Run's events with aggregate_kind RUN`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time')
    const workflowId = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await newRun(target, workflowId)
    const s = await openRaw(target.baseUrl, `/v1/runs/${run_id}/events`, {
      key: target.world.keys.full,
    })
    expect(s.status, s.text()).toBe(200)
    await control.advance(60)
    await s.waitFor(
      (x) =>
        x.events().some((f) => /^run\.(completed|failed|canceled|expired)$/.test(f.event ?? '')),
      'the Run outcome',
    )
    for (const e of s.events().map(eventOf)) {
      expect(e.aggregate_kind).toBe('RUN')
      expect(e.aggregate_id).toBe(run_id)
    }
    const outcome = s
      .events()
      .map(eventOf)
      .find((e) => e.data.kind === 'OUTCOME')!
    // run.step.completed marks the end of one step only: every one comes before the Run's outcome.
    const types = s.events().map((f) => f.event)
    const steps = s
      .events()
      .map(eventOf)
      .filter((e) => e.type === 'run.step.completed')
    for (const step of steps) expect(step.data.kind).toBe('STEP_OUTCOME')
    expect(types.lastIndexOf('run.step.completed')).toBeLessThan(
      types.indexOf(outcome.type as string),
    )
    if (outcome.data.status === 'SUCCEEDED') expect(steps.length).toBeGreaterThan(0)
    const run = await unthrottled(target, () =>
      target.api.get(`/v1/runs/${run_id}`, { key: target.world.keys.full }),
    )
    expect(outcome.data.status).toBe((run.body as { run: { status: string } }).run.status)
  })
})
