/**
 * The reference client against the mock over real HTTP on 127.0.0.1, under generated fault schedules (fault
 * rules: catalog errors with Retry-After, proxy errors, dropped and unanswered requests, cut streams, error
 * frames, repeated events): it finishes its job (a Session whose Turn succeeds, its events followed to the
 * end, its result file downloaded and checked) with zero referee findings and exactly one execution. A
 * deliberately naive client under the same schedules is caught by the referee for what each schedule
 * provokes. Time is the mock's virtual clock: the clients' sleep advances it.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMock, type Listening, type Mock } from '../mock/index.js'
import { NaiveClient } from '../scripts/lib/naive-client.js'
import { ReferenceClient, ServiceError, type ServiceEvent, type Turn } from './index.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 15)

type Violation = { rule: string; requirement_id: string; key: string }
type Rule = { match: Record<string, string>; action: Record<string, unknown>; times: number }

let mock: Mock
let server: Listening

beforeAll(async () => {
  mock = await createMock({ clock: 'manual' })
  server = await mock.listen({ host: '127.0.0.1' })
})
afterAll(async () => {
  await server.close()
  mock.close()
})

const control = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}/_mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status >= 300)
    throw new Error(`${method} /_mock${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as unknown
}

/** Waits on the mock's virtual clock. */
const virtualSleep = async (ms: number) => {
  if (ms > 0) await control('POST', '/clock/advance', { seconds: ms / 1000 })
}

/** A fresh world with the job's scenario queued and the schedule's fault rules added. */
async function prepare(schedule: Rule[], opts: { forwardCompat?: boolean } = {}) {
  await control('POST', '/reset', {})
  if (opts.forwardCompat) await control('POST', '/forward-compat', { enabled: true })
  await control('POST', '/scenarios', { target_id: DEPLOYMENT, scenario: 'file-output', times: 3 })
  for (const rule of schedule) await control('POST', '/faults', rule)
}

const findings = async () =>
  ((await control('GET', '/referee')) as { violations: Violation[] }).violations
const turnsCreated = () =>
  (
    mock.deps.db.raw.prepare("SELECT COUNT(*) AS n FROM executions WHERE kind = 'TURN'").get() as {
      n: number
    }
  ).n

// --- fault schedules -------------------------------------------------------------------------------------

const once = (operation: string, action: Record<string, unknown>): Rule => ({
  match: { operation },
  action,
  times: 1,
})
const retryAfter = fc.integer({ min: 1, max: 5 })
const proxy = fc.constantFrom(502, 503, 504).map((p) => ({ proxy: p }))
const drop = fc.constantFrom('before', 'after').map((d) => ({ drop: d }))
const createFault = fc.oneof(
  drop,
  proxy,
  retryAfter.map((s) => ({ error: 'SESSION_UPDATING', retry_after_s: s })),
  retryAfter.map((s) => ({ error: 'RATE_LIMITED', retry_after_s: s })),
  fc.constant({ error: 'BILLING_UNAVAILABLE' }),
)
const pollFault = fc.oneof(
  drop,
  proxy,
  retryAfter.map((s) => ({ error: 'RATE_LIMITED', retry_after_s: s })),
  fc.constant({ error: 'OUTPUT_MANIFEST_UNAVAILABLE' }),
)
const streamFault = fc.oneof(
  fc.integer({ min: 0, max: 3 }).map((n) => ({ stream: 'close', after_events: n })),
  fc
    .integer({ min: 1, max: 3 })
    .map((n) => ({ stream: 'error', after_events: n, code: 'SESSION_UPDATING' })),
  fc.integer({ min: 1, max: 2 }).map((n) => ({ stream: 'repeat', after_events: n })),
  drop,
  proxy,
)
const downloadFault = fc.oneof(proxy, fc.constant({ error: 'STORAGE_UNAVAILABLE' }))
const contentFault = fc.oneof(drop, proxy)

const schedules = fc
  .record({
    create: fc.array(createFault, { maxLength: 3 }),
    poll: fc.array(pollFault, { maxLength: 2 }),
    stream: fc.array(streamFault, { maxLength: 3 }),
    download: fc.array(downloadFault, { maxLength: 1 }),
    content: fc.array(contentFault, { maxLength: 1 }),
  })
  .map((s) => [
    ...s.create.map((a) => once('createSession', a)),
    ...s.poll.map((a) => once('getTurn', a)),
    ...s.stream.map((a) => once('streamSessionEvents', a)),
    ...s.download.map((a) => once('createArtifactDownload', a)),
    ...s.content.map((a) => once('getArtifactContent', a)),
  ])

// --- the job ---------------------------------------------------------------------------------------------

type JobResult = { turn: Turn; events: ServiceEvent[]; bytes: Uint8Array }

/** Create a Session, wait for its Turn, follow its events to the Turn's end, download the result file. */
async function referenceJob(client: ReferenceClient): Promise<JobResult> {
  const receipt = await client.createSession(DEPLOYMENT, {
    input: [{ type: 'TEXT', text: 'the job' }],
  })
  const turn = await client.waitForTurn(receipt.status_url)
  const events: ServiceEvent[] = []
  await client.followEvents(receipt.events_url, (e) => {
    events.push(e)
    return e.type === 'turn.completed' || e.type === 'turn.failed'
  })
  const file = turn.outputs.find((o) => o.type === 'FILE')
  if (!file || file.type !== 'FILE') throw new Error(`no FILE output: ${JSON.stringify(turn)}`)
  const bytes = await client.download(file.artifact_id, file.sha256)
  return { turn, events, bytes }
}

describe('reference client under fault schedules', () => {
  it('[RETRY-001][RETRY-002][RETRY-004][RETRY-017][RATE-007][SSE-016][SSE-021][SSE-023][ART-010] finishes its job with zero referee findings and runs the work once', async () => {
    await fc.assert(
      fc.asyncProperty(
        schedules,
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        async (schedule, jitter) => {
          await prepare(schedule)
          const client = new ReferenceClient({
            baseUrl: server.url,
            apiKey: KEY,
            sleep: virtualSleep,
            random: () => jitter,
          })
          const { turn, events, bytes } = await referenceJob(client)
          expect(turn.status).toBe('SUCCEEDED')
          expect(bytes.byteLength).toBeGreaterThan(0)
          // SSE-016: every event handed on once, the Turn's end last.
          const ids = events.map((e) => e.event_id)
          expect(new Set(ids).size).toBe(ids.length)
          expect(events.at(-1)!.type).toBe('turn.completed')
          expect(await findings()).toEqual([])
          expect(turnsCreated()).toBe(1)
        },
      ),
      { numRuns: NUM_RUNS },
    )
  }, 240_000)

  it('[VER-003][ERR-012] finishes the same way when the mock answers like a later minor version', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        await prepare(schedule, { forwardCompat: true })
        const client = new ReferenceClient({
          baseUrl: server.url,
          apiKey: KEY,
          sleep: virtualSleep,
        })
        const { turn, events } = await referenceJob(client)
        expect(turn.status).toBe('SUCCEEDED')
        // The unknown event type reached the client and was tolerated.
        expect(events.some((e) => e.type === 'turn.insight')).toBe(true)
        expect(await findings()).toEqual([])
        expect(turnsCreated()).toBe(1)
      }),
      { numRuns: Math.max(3, Math.ceil(NUM_RUNS / 3)) },
    )
  }, 240_000)

  it('[RETRY-004][RETRY-017][IDEM-003] resends an unanswered upload and added input with the same key: one file, one Turn each', async () => {
    await prepare([
      once('uploadFile', { drop: 'after' }),
      once('addTurn', { drop: 'after' }),
      once('addTurn', { proxy: 503 }),
    ])
    const client = new ReferenceClient({ baseUrl: server.url, apiKey: KEY, sleep: virtualSleep })
    const bytes = new TextEncoder().encode('a small input file\n')
    const file = await client.uploadFile({ bytes, filename: 'notes.txt', mimeType: 'text/plain' })
    const count = (table: string) =>
      (mock.deps.db.raw.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
    expect(count('files')).toBe(1)
    const receipt = await client.createSession(DEPLOYMENT, {
      input: [
        { type: 'TEXT', text: 'read this' },
        { type: 'FILE', file_id: file.file_id },
      ],
    })
    expect((await client.waitForTurn(receipt.status_url)).status).toBe('SUCCEEDED')
    const second = await client.addTurn(receipt.session_id, {
      input: [{ type: 'TEXT', text: 'and now' }],
    })
    expect(second.session_id).toBe(receipt.session_id)
    expect((await client.waitForTurn(second.status_url)).status).toBe('SUCCEEDED')
    expect(turnsCreated()).toBe(2)
    expect(await findings()).toEqual([])
  })

  it('[RETRY-008] after a "one more later" code creates one new execution with the same input, and stops when it repeats', async () => {
    const client = new ReferenceClient({ baseUrl: server.url, apiKey: KEY, sleep: virtualSleep })
    const input = { input: [{ type: 'TEXT' as const, text: 'try again later' }] }
    await control('POST', '/reset', {})
    await control('POST', '/scenarios', { target_id: DEPLOYMENT, scenario: 'fail' })
    const recovered = await client.runTurn(DEPLOYMENT, input)
    expect([recovered.turn.status, recovered.nextStep, recovered.turnIds.length]).toEqual([
      'SUCCEEDED',
      undefined,
      2,
    ])
    await control('POST', '/reset', {})
    await control('POST', '/scenarios', { target_id: DEPLOYMENT, scenario: 'fail', times: 3 })
    const repeated = await client.runTurn(DEPLOYMENT, input)
    expect([repeated.turn.error?.code, repeated.nextStep, repeated.turnIds.length]).toEqual([
      'EXECUTION_FAILED',
      'one-more-later',
      2,
    ])
    expect(turnsCreated()).toBe(2)
    expect(await findings()).toEqual([])
  })

  it('[RETRY-010] does not run a publishing-settings failure again', async () => {
    const client = new ReferenceClient({ baseUrl: server.url, apiKey: KEY, sleep: virtualSleep })
    await control('POST', '/reset', {})
    await control('POST', '/scenarios', {
      target_id: DEPLOYMENT,
      scenario: 'needs-action',
      times: 2,
    })
    const outcome = await client.runTurn(DEPLOYMENT, {
      input: [{ type: 'TEXT', text: 'approve this' }],
    })
    expect([outcome.turn.error?.code, outcome.nextStep, turnsCreated()]).toEqual([
      'ACTION_REQUIRED_UNSUPPORTED',
      'publishing-settings',
      1,
    ])
  })

  it('[RETRY-001] does not resend an answer with retryable false, and the referee agrees', async () => {
    await prepare([once('createSession', { error: 'INVALID_INPUT', status: 422 })])
    const client = new ReferenceClient({ baseUrl: server.url, apiKey: KEY, sleep: virtualSleep })
    const error = await client
      .createSession(DEPLOYMENT, { input: [{ type: 'TEXT', text: 'x' }] })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).attempts).toBe(1)
    expect(await findings()).toEqual([])
  })
})

/** What a schedule provokes a naive client to break, by requirement id (beside polling too often, always). */
function provoked(schedule: Rule[]): Set<string> {
  const ids = new Set(['RATE-007'])
  for (const { match, action } of schedule) {
    if (match.operation === 'createSession' && 'drop' in action) ids.add('RETRY-017')
    if ('retry_after_s' in action) ids.add('RETRY-002')
  }
  return ids
}

const naive = () =>
  new NaiveClient({
    baseUrl: server.url,
    apiKey: KEY,
    deploymentId: DEPLOYMENT,
    sleep: virtualSleep,
  })

describe('a naive client under the same fault schedules', () => {
  it('[RETRY-002][RETRY-017][RATE-007] is caught by the referee for what each schedule provokes', async () => {
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        await prepare(schedule)
        await naive()
          .job()
          .catch(() => undefined)
        const found = new Set((await findings()).map((v) => v.requirement_id))
        for (const id of provoked(schedule))
          expect([...found], JSON.stringify(schedule)).toContain(id)
        // An unanswered create that the naive client sent again with a new key ran the work twice.
        const lostAfter = schedule.some(
          (r) => r.match.operation === 'createSession' && r.action.drop === 'after',
        )
        if (lostAfter) expect(turnsCreated()).toBeGreaterThan(1)
      }),
      { numRuns: NUM_RUNS },
    )
  }, 240_000)

  it('[SSE-023] reopening a cut stream from the start is caught', async () => {
    await prepare([once('streamSessionEvents', { stream: 'close', after_events: 1 })])
    await naive().job()
    expect((await findings()).map((v) => v.requirement_id)).toContain('SSE-023')
  })

  it('[RETRY-001] resending an answer with retryable false is caught', async () => {
    await prepare([once('createSession', { error: 'INVALID_INPUT', status: 422 })])
    await naive().job()
    expect((await findings()).map((v) => v.requirement_id)).toContain('RETRY-001')
  })
})
