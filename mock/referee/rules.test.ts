import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  emptyRecord,
  judge,
  MAX_ENTRIES_PER_KEY,
  POLL_MIN_INTERVAL_MS,
  remember,
  Remembered,
  delivered,
  violationOf,
  type KeyRecord,
  type Observation,
  type RuleName,
} from './rules.js'

const T0 = Date.parse('2026-01-01T00:00:00Z')
let seq = 0
/** An observation: a create-like POST answered 202 at T0 unless told otherwise. */
function obs(o: Partial<Observation> & { body?: string; query?: string } = {}): Observation {
  const { body = 'b', query = '', ...rest } = o
  const method = rest.method ?? 'POST'
  const path = rest.path ?? '/v1/deployments/d/sessions'
  const key = rest.idempotencyKey
  return {
    method,
    path,
    requestId: `req-${++seq}`,
    atMs: T0,
    answeredAtMs: rest.atMs ?? T0,
    identity: () => `${method} ${path}${query}|${key ?? ''}|${body}`,
    content: () => `${method} ${path}|${body}`,
    status: 202,
    ...rest,
  }
}

const rulesOf = (r: KeyRecord, o: Observation) => judge(r, 'k1', o).map((v) => v.rule)

describe('client referee rules', () => {
  it('[RETRY-001] flags the same request sent again after an answer with retryable false', () => {
    const r = emptyRecord()
    expect(rulesOf(r, obs({ status: 422, retryable: false, code: 'INVALID_INPUT' }))).toEqual([])
    const v = judge(r, 'k1', obs({ atMs: T0 + 60_000 })).map(violationOf)
    expect(v.map((x) => x.rule)).toEqual(['resend-after-non-retryable'])
    expect(v[0]!.requirement_id).toBe('RETRY-001')
    expect(v[0]!.key).toBe('k1')
    expect(v[0]!.requests).toHaveLength(2)
    // As reported: the times of the two requests, the violation's that of the resend.
    expect(v[0]!.requests.map((q) => q.at)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:00.000Z',
    ])
    expect(v[0]!.at).toBe('2026-01-01T00:01:00.000Z')
    // Another body is another request: not a resend.
    expect(rulesOf(r, obs({ body: 'fixed' }))).toEqual([])
  })

  it('[RETRY-001] does not flag a resend after a retryable error or a success', () => {
    const r = emptyRecord()
    rulesOf(r, obs({ status: 503, retryable: true }))
    expect(rulesOf(r, obs({ atMs: T0 + 1 }))).toEqual([])
    expect(rulesOf(r, obs({ atMs: T0 + 2 }))).toEqual([])
  })

  it('[RETRY-002] flags a resend before Retry-After has passed on the virtual clock, not one at it', () => {
    const r = emptyRecord()
    rulesOf(r, obs({ status: 429, retryable: true, retryAfterMs: 5_000 }))
    expect(
      rulesOf(r, obs({ atMs: T0 + 4_999, status: 429, retryable: true, retryAfterMs: 5_000 })),
    ).toEqual(['resend-before-retry-after'])
    // The second 429 answered at T0 + 4999 asks for 5 s more.
    expect(rulesOf(r, obs({ atMs: T0 + 9_999 }))).toEqual([])
  })

  it('[RETRY-017] flags a new Idempotency-Key for the same body after an unanswered request', () => {
    const r = emptyRecord()
    expect(rulesOf(r, obs({ idempotencyKey: 'a', status: 0 }))).toEqual([])
    expect(rulesOf(r, obs({ idempotencyKey: 'b', atMs: T0 + 1_000 }))).toEqual([
      'changed-key-after-unanswered',
    ])
  })

  it('[RETRY-017] a resend with the same key settles the unanswered request', () => {
    const r = emptyRecord()
    rulesOf(r, obs({ idempotencyKey: 'a', status: 0 }))
    expect(rulesOf(r, obs({ idempotencyKey: 'a' }))).toEqual([])
    // New work with the same input afterwards is the client's decision.
    expect(rulesOf(r, obs({ idempotencyKey: 'c' }))).toEqual([])
  })

  it('[RETRY-004] flags another body under a key the server acted on, not under a key it refused', () => {
    const r = emptyRecord()
    rulesOf(r, obs({ idempotencyKey: 'a' }))
    expect(
      rulesOf(r, obs({ idempotencyKey: 'a', body: 'other', status: 409, retryable: false })),
    ).toEqual(['changed-body-same-key'])
    const fresh = emptyRecord()
    rulesOf(fresh, obs({ idempotencyKey: 'x', status: 422, retryable: false }))
    expect(rulesOf(fresh, obs({ idempotencyKey: 'x', body: 'corrected' }))).toEqual([])
  })

  it('[RETRY-004] does not hold a key to its body once 24 hours passed (the receipt may have expired: RET-001)', () => {
    const r = emptyRecord()
    rulesOf(r, obs({ idempotencyKey: 'a' }))
    const day = 24 * 3600_000
    expect(rulesOf(r, obs({ idempotencyKey: 'a', body: 'other', atMs: T0 + day - 1 }))).toEqual([
      'changed-body-same-key',
    ])
    expect(rulesOf(r, obs({ idempotencyKey: 'a', body: 'other', atMs: T0 + day }))).toEqual([])
  })

  it('[RATE-007] flags two successful polls of one Turn under 2 virtual seconds apart', () => {
    const r = emptyRecord()
    const poll = (atMs: number, path = '/v1/runs/r1') =>
      obs({ method: 'GET', path, poll: path, atMs, status: 200 })
    expect(rulesOf(r, poll(T0))).toEqual([])
    expect(rulesOf(r, poll(T0 + POLL_MIN_INTERVAL_MS))).toEqual([])
    expect(rulesOf(r, poll(T0 + POLL_MIN_INTERVAL_MS + 1_999))).toEqual(['polling-too-often'])
    // Another Run is polled on its own schedule.
    expect(rulesOf(r, poll(T0 + POLL_MIN_INTERVAL_MS + 1_999, '/v1/runs/r2'))).toEqual([])
  })

  it('[SSE-023] flags a reconnect without a cursor once an event was delivered, not after EVENT_CURSOR_EXPIRED', () => {
    const r = emptyRecord()
    const open = (cursor: boolean, extra: Partial<Observation> = {}) =>
      obs({
        method: 'GET',
        path: '/v1/runs/r1/events',
        status: 200,
        query: cursor ? '?after=e1' : '',
        stream: { aggregate: 'r1', cursor, lastDelivered: r.delivered.get('r1')?.ref },
        ...extra,
      })
    expect(rulesOf(r, open(false))).toEqual([])
    delivered(r, 'r1', 'e1', {
      method: 'GET',
      path: '/v1/runs/r1/events',
      request_id: 'x',
      atMs: 0,
    })
    expect(rulesOf(r, open(true))).toEqual([])
    expect(rulesOf(r, open(false))).toEqual(['sse-reconnect-without-last-id'])
    rulesOf(r, open(true, { status: 410, retryable: false, code: 'EVENT_CURSOR_EXPIRED' }))
    expect(rulesOf(r, open(false))).toEqual([])
  })

  it('[WHN-020] flags work accepted while a webhook to the Project is in flight', () => {
    const r = emptyRecord()
    expect(rulesOf(r, obs({ createdDuringWebhook: true }))).toEqual(['work-created-from-webhook'])
    expect(rulesOf(r, obs({ createdDuringWebhook: true, status: 429, retryable: true }))).toEqual(
      [],
    )
    expect(rulesOf(r, obs({ idempotencyKey: 'n' }))).toEqual([])
  })

  it('[RETRY-001] keeps a bounded record per key', () => {
    const r = emptyRecord()
    for (let i = 0; i < MAX_ENTRIES_PER_KEY + 50; i++)
      judge(r, 'k1', obs({ body: `b${i}`, status: 404, retryable: false }))
    expect(r.answers.size).toBe(MAX_ENTRIES_PER_KEY)
  })

  it('[RETRY-001][RETRY-002][RETRY-004][RETRY-017][RATE-007] a client that follows the rules is never flagged, one that breaks one is flagged for it', () => {
    // A correct client: each request either succeeds, fails retryably (with or without Retry-After) or goes
    // unanswered; it resends the same key and body after the wait, and polls 2 s apart.
    const step = fc.record({
      outcome: fc.constantFrom('ok', 'retryable', 'retry-after', 'unanswered'),
      waitMs: fc.integer({ min: 0, max: 3_000 }),
      retryAfterS: fc.integer({ min: 1, max: 5 }),
    })
    const trace = fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { maxLength: 6 })
    const breakage = fc.constantFrom<RuleName>(
      'resend-after-non-retryable',
      'resend-before-retry-after',
      'changed-key-after-unanswered',
      'changed-body-same-key',
      'polling-too-often',
    )
    fc.assert(
      fc.property(trace, fc.option(breakage, { nil: undefined }), (works, broken) => {
        const r = emptyRecord()
        let now = T0
        const seen: RuleName[] = []
        const see = (o: Observation) => seen.push(...judge(r, 'k1', o).map((v) => v.rule))
        works.forEach((attempts, w) => {
          const body = `work-${w}`
          const key = `key-${w}`
          for (const a of attempts) {
            const status = a.outcome === 'ok' ? 202 : a.outcome === 'unanswered' ? 0 : 503
            see(
              obs({
                body,
                idempotencyKey: key,
                atMs: now,
                status,
                retryable: status === 503 ? true : undefined,
                retryAfterMs: a.outcome === 'retry-after' ? a.retryAfterS * 1000 : undefined,
              }),
            )
            now += a.outcome === 'retry-after' ? a.retryAfterS * 1000 : a.waitMs
            if (status === 202) break
          }
          // Poll the work's resource at the document's interval.
          const path = `/v1/runs/run-${w}`
          see(obs({ method: 'GET', path, poll: path, atMs: now, status: 200 }))
          now += POLL_MIN_INTERVAL_MS
          see(obs({ method: 'GET', path, poll: path, atMs: now, status: 200 }))
        })
        expect(seen).toEqual([])
        if (broken === undefined) return
        const b = { body: 'bad', idempotencyKey: 'bad-key', atMs: now }
        switch (broken) {
          case 'resend-after-non-retryable':
            see(obs({ ...b, status: 422, retryable: false }))
            see(obs({ ...b, atMs: now + 10_000 }))
            break
          case 'resend-before-retry-after':
            see(obs({ ...b, status: 429, retryable: true, retryAfterMs: 3_000 }))
            see(obs({ ...b, atMs: now + 2_000 }))
            break
          case 'changed-key-after-unanswered':
            see(obs({ ...b, status: 0 }))
            see(obs({ ...b, idempotencyKey: 'another-key' }))
            break
          case 'changed-body-same-key':
            see(obs(b))
            see(obs({ ...b, body: 'changed', status: 409, retryable: false }))
            break
          case 'polling-too-often':
            see(
              obs({
                method: 'GET',
                path: '/v1/runs/x',
                poll: '/v1/runs/x',
                atMs: now,
                status: 200,
              }),
            )
            see(
              obs({
                method: 'GET',
                path: '/v1/runs/x',
                poll: '/v1/runs/x',
                atMs: now + 1_999,
                status: 200,
              }),
            )
            break
        }
        expect(seen).toEqual([broken])
      }),
      { numRuns: 200 },
    )
  })
})

it('remembers entries newest last, as deleting and re-adding each would, and forgets the oldest beyond the bound [RATE-007]', () => {
  type Op = { kind: 'remember' | 'delete' | 'set'; key: number; value: number }
  const op = fc.record({
    kind: fc.constantFrom(
      'remember' as const,
      'remember' as const,
      'delete' as const,
      'set' as const,
    ),
    key: fc.integer({ min: 0, max: 6 }),
    value: fc.integer(),
  })
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops: Op[]) => {
      const ours = new Remembered<number, number>()
      const model = new Map<number, number>()
      for (const o of ops) {
        if (o.kind === 'remember') {
          remember(ours, o.key, o.value)
          model.delete(o.key)
          model.set(o.key, o.value)
        } else if (o.kind === 'delete') {
          ours.delete(o.key)
          model.delete(o.key)
        } else {
          // A direct set, as undoDeliveries restores an entry.
          ours.set(o.key, o.value)
          model.set(o.key, o.value)
        }
        expect([...ours]).toEqual([...model])
      }
    }),
    { numRuns: 300 },
  )
  const bounded = new Remembered<number, number>()
  for (let i = 0; i <= MAX_ENTRIES_PER_KEY; i++) remember(bounded, i, i)
  expect(bounded.size).toBe(MAX_ENTRIES_PER_KEY)
  expect(bounded.has(0)).toBe(false)
})
