/**
 * Queue timeouts with one pending timer per Project (execution/queue-timeouts.ts): every execution that has
 * not started when its queue window ends expires then, whatever the other executions of its Project do, and
 * none expires otherwise (STATE-006, TIME-001 for a Run's first step); a waiting acceptance behind an earlier
 * deadline writes no timer.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { defaultWorld } from '../fixtures/test-worlds.js'
import { createMock, type Mock } from '../index.js'
import { upgraded } from '../store/test-stores.js'
import { getExecution } from '../store/executions.js'
import { insertTimer } from '../store/timers.js'
import { QUEUE_TIMEOUT, queueSubject } from './queue-timeouts.js'

const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const PROJECT = 'aaaaaaaa-0000-4000-8000-000000000000'
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }

type Real = { mock: Mock; turns: { session: string; turn: string }[]; keys: number }

async function accept(r: Real, queueSeconds: number, scenario: string): Promise<void> {
  const queued = await r.mock.app.request('/_mock/scenarios', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ target_id: D, scenario, times: 1 }),
  })
  expect(queued.status).toBe(201)
  const res = await r.mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, 'Idempotency-Key': `q-${r.keys++}` },
    body: JSON.stringify({
      input: [{ type: 'TEXT', text: 'x' }],
      limits: { max_su: 0.01, queue_seconds: queueSeconds },
    }),
  })
  expect(res.status).toBe(202)
  const body = (await res.json()) as { session_id: string; turn_id: string }
  r.turns.push({ session: body.session_id, turn: body.turn_id })
}

/** STATE-006 over every Turn accepted so far, read from the store at the clock's instant. */
function checkQueueRule(r: Real): void {
  const now = r.mock.clock.now().getTime()
  for (const { turn } of r.turns) {
    const e = getExecution(r.mock.deps.db, turn)!
    const due = e.created_at + e.queue_seconds * 1000
    expect(e.queue_due_at).toBe(due)
    // Expired for its queue time exactly when it ended, never started, at its deadline (the queue-timeout
    // scenario scripts that end earlier, as if its time had passed).
    if (e.error?.code === 'QUEUE_TIMEOUT' && e.scenario !== 'queue-timeout') {
      expect(e.status).toBe('EXPIRED')
      expect(e.started_at).toBeNull()
      expect(e.completed_at).toBe(due)
    }
    // Not started and not ended: its deadline is still to come.
    if (e.status === 'QUEUED' && !e.terminal) expect(now).toBeLessThan(due)
  }
}

class Accept implements fc.AsyncCommand<object, Real> {
  constructor(
    readonly queueSeconds: number,
    readonly scenario: string,
  ) {}
  check = () => true
  async run(_: object, r: Real) {
    await accept(r, this.queueSeconds, this.scenario)
    checkQueueRule(r)
  }
  toString = () => `accept(queue ${this.queueSeconds}s, ${this.scenario})`
}

class Advance implements fc.AsyncCommand<object, Real> {
  constructor(readonly seconds: number) {}
  check = () => true
  async run(_: object, r: Real) {
    await r.mock.clock.advance(this.seconds)
    checkQueueRule(r)
  }
  toString = () => `advance(${this.seconds}s)`
}

class Cancel implements fc.AsyncCommand<object, Real> {
  constructor(readonly pick: number) {}
  check = () => true
  async run(_: object, r: Real) {
    if (r.turns.length === 0) return
    const { session, turn } = r.turns[this.pick % r.turns.length]!
    const res = await r.mock.app.request(`/v1/sessions/${session}/turns/${turn}/cancel`, {
      method: 'POST',
      headers: { ...H, 'Idempotency-Key': `c-${r.keys++}` },
    })
    expect(res.status).toBeLessThan(500)
    checkQueueRule(r)
  }
  toString = () => `cancel(#${this.pick})`
}

it('[STATE-006] expires every execution not started when its own queue window ends, and no other, through acceptances, starts, ends and cancels in any order', async () => {
  const world = defaultWorld()
  Object.assign(world.projects[0]!, {
    su_balance: 1000,
    daily_budget_su: 1000,
    monthly_budget_su: 30000,
    max_waiting_executions: 50,
  })
  const commands = [
    fc
      .tuple(
        fc.constantFrom(1, 2, 3, 5, 8, 30, 600),
        fc.constantFrom('succeed', 'slow', 'fail', 'queue-timeout'),
      )
      .map(([q, s]) => new Accept(q, s)),
    fc.constantFrom(0.5, 1, 2, 3, 4, 7, 31, 700).map((s) => new Advance(s)),
    fc.nat(40).map((n) => new Cancel(n)),
  ]
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
      const mock = await createMock({ fixtures: world, rateLimits: false })
      try {
        await fc.asyncModelRun(() => ({ model: {}, real: { mock, turns: [], keys: 0 } }), cmds)
      } finally {
        mock.close()
      }
    }),
    { numRuns: 40 },
  )
}, 120_000)

it('[STATE-006] expires a Turn with a short queue window accepted behind one with a long window at its own deadline', async () => {
  const mock = await createMock({ rateLimits: false })
  const r: Real = { mock, turns: [], keys: 0 }
  try {
    // Both slots taken by slow Turns; then a waiting Turn of 600 s and one of 5 s.
    await accept(r, 600, 'slow')
    await accept(r, 600, 'slow')
    await accept(r, 600, 'slow')
    await accept(r, 5, 'slow')
    await mock.clock.advance(5)
    const [long, short] = [r.turns[2]!.turn, r.turns[3]!.turn].map((id) =>
      getExecution(mock.deps.db, id)!,
    )
    expect([long!.status, short!.status, short!.error?.code]).toEqual([
      'QUEUED',
      'EXPIRED',
      'QUEUE_TIMEOUT',
    ])
    expect(short!.completed_at).toBe(short!.created_at + 5000)
    await mock.clock.advance(595)
    expect(getExecution(mock.deps.db, long!.id)!.error?.code).toBe('QUEUE_TIMEOUT')
  } finally {
    mock.close()
  }
})

it('[STATE-006] expires the Project’s later waiting Turns on time after a queue timeout whose firing failed', async () => {
  const mock = await createMock({ rateLimits: false })
  const r: Real = { mock, turns: [], keys: 0 }
  try {
    // Both slots taken by slow Turns; then three waiting Turns with windows of 5, 10 and 15 s.
    await accept(r, 600, 'slow')
    await accept(r, 600, 'slow')
    await accept(r, 5, 'slow')
    await accept(r, 10, 'slow')
    await accept(r, 15, 'slow')
    const [broken, next, last] = [2, 3, 4].map((i) => r.turns[i]!.turn)
    // A bug in whatever the first one's expiry sets off: its firing throws and rolls back.
    mock.deps.bus.execution.on((_deps, event) => {
      if (
        event.type === 'status' &&
        event.execution.id === broken &&
        event.execution.status === 'EXPIRED'
      )
        throw new Error('a listener failed')
    })
    await expect(mock.clock.advance(15)).rejects.toThrow()
    const status = (id: string) => {
      const e = getExecution(mock.deps.db, id)!
      return [
        e.status,
        e.error?.code,
        e.completed_at === null ? null : e.completed_at - e.created_at,
      ]
    }
    // The failed one is left waiting (its timer dropped so that it cannot fail forever); the Project's later
    // ones still expire, each at its own deadline.
    expect(status(broken!)).toEqual(['QUEUED', undefined, null])
    expect(status(next!)).toEqual(['EXPIRED', 'QUEUE_TIMEOUT', 10_000])
    expect(status(last!)).toEqual(['EXPIRED', 'QUEUE_TIMEOUT', 15_000])
  } finally {
    mock.close()
  }
})

it('[STATE-006] starts a Turn whose first script step is due at its queue deadline: the step comes first, as it was scheduled first', async () => {
  const mock = await createMock({ rateLimits: false })
  const r: Real = { mock, turns: [], keys: 0 }
  try {
    // 'succeed' starts RUNNING 1 s after admission; the Turn is admitted at once, with a queue window of 1 s.
    await accept(r, 1, 'succeed')
    await mock.clock.advance(1)
    expect(getExecution(mock.deps.db, r.turns[0]!.turn)!.status).toBe('RUNNING')
  } finally {
    mock.close()
  }
})

it('[STATE-006] writes no timer for a Turn that waits behind an earlier queue deadline of its Project', async () => {
  const world = defaultWorld()
  world.projects[0]!.max_waiting_executions = 20
  const mock = await createMock({ fixtures: world, rateLimits: false })
  const r: Real = { mock, turns: [], keys: 0 }
  try {
    for (let i = 0; i < 3; i++) await accept(r, 600, 'slow')
    const pending = mock.deps.scheduler.pending()
    for (let i = 0; i < 10; i++) await accept(r, 600, 'slow')
    expect(mock.deps.scheduler.pending()).toBe(pending)
    const armed = mock.deps.db
      .stmt('SELECT payload_json FROM timers WHERE subject = ?')
      .all(queueSubject(PROJECT)) as { payload_json: string }[]
    // The Project's one queue timeout holds its first Turn's deadline (both slots' Turns have not started).
    expect(armed.map((t) => JSON.parse(t.payload_json) as unknown)).toEqual([
      { id: r.turns[0]!.turn, project_id: PROJECT },
    ])
  } finally {
    mock.close()
  }
})

it('[STATE-015] gives a kept store’s pending queue timeouts to their Projects through the upgrade (schema 280)', () => {
  upgraded(
    '280',
    (old) => {
      const insert = old.raw.prepare(
        `INSERT INTO executions (id, seq, kind, project_id, api_key, status, scenario, steps_json, input_json,
           metadata_json, execution_seconds, queue_seconds, max_su, created_at, terminal)
         VALUES (?, ?, 'TURN', ?, 'k', ?, 'slow', '[]', '[]', '{}', 3600, 600, 1, 0, ?)`,
      )
      insert.run('e1', 1, 'p1', 'QUEUED', 0)
      insert.run('e2', 2, 'p2', 'SUCCEEDED', 1)
      insertTimer(old, {
        id: '600000.7',
        due_at: 600_000,
        seq: 7,
        kind: QUEUE_TIMEOUT,
        payload_json: JSON.stringify({ id: 'e1' }),
        subject: 'e1',
      })
    },
    (db) => {
      expect(
        db.raw
          .prepare('SELECT id, queue_due_at, queue_timer_seq FROM executions ORDER BY id')
          .all(),
      ).toEqual([
        { id: 'e1', queue_due_at: 600_000, queue_timer_seq: 7 },
        { id: 'e2', queue_due_at: null, queue_timer_seq: null },
      ])
      expect(db.raw.prepare('SELECT due_at, seq, subject, payload_json FROM timers').all()).toEqual(
        [
          {
            due_at: 600_000,
            seq: 7,
            subject: queueSubject('p1'),
            payload_json: JSON.stringify({ id: 'e1', project_id: 'p1' }),
          },
        ],
      )
    },
  )
})

it('[STATE-006] keeps the queue timeouts of waiting Turns through a restart without cleanup: their reserved keys are not handed out again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-db-'))
  const file = join(dir, 'state.db')
  const first = await createMock({ db: file, rateLimits: false })
  const second: Mock[] = []
  try {
    const r: Real = { mock: first, turns: [], keys: 0 }
    // Two slow Turns take the slots (their queue timeouts: the first is the Project's timer); two wait
    // behind it with reserved keys and no timer of their own.
    for (let i = 0; i < 4; i++) await accept(r, 600, 'slow')
    const waiting = r.turns.slice(2).map((t) => getExecution(first.deps.db, t.turn)!)
    // No close(): like kill -9. The second process schedules timers of its own at the same instant.
    second.push(await createMock({ db: file, rateLimits: false }))
    const next = second[0]!.deps.scheduler.reserveSeq()
    expect(next).toBeGreaterThan(Math.max(...waiting.map((e) => e.queue_timer_seq!)))
    await second[0]!.clock.advance(600)
    for (const e of waiting)
      expect(getExecution(second[0]!.deps.db, e.id)).toMatchObject({
        status: 'EXPIRED',
        completed_at: e.queue_due_at,
        error: { code: 'QUEUE_TIMEOUT' },
      })
  } finally {
    for (const m of second) m.close()
    first.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
