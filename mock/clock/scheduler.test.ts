import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { getTimer } from '../store/timers.js'
import { SchedulerLoopError, TimerFailuresError } from './scheduler.js'
import { TimerKinds, type TimerHandler } from './timer-kinds.js'

const mocks: Mock[] = []
afterEach(() => {
  while (mocks.length) mocks.pop()!.close()
})

async function mockWith(
  register: (kinds: TimerKinds) => void,
  opts: { loopLimit?: number; clock?: 'manual' | 'realtime' } = {},
) {
  const mock = await createMock({ timerKinds: register, ...opts })
  mocks.push(mock)
  return mock
}

type Fired = { name: string; due: number; seq: number; now: number }

describe('scheduler', () => {
  it('fires random schedules, nested timers included, in (due_at, seq) order and never moves the clock back', async () => {
    type Spec = { delay: number; children: { delay: number; grandchildren: number[] }[] }
    const spec: fc.Arbitrary<Spec> = fc.record({
      delay: fc.integer({ min: 0, max: 5000 }),
      children: fc.array(
        fc.record({
          delay: fc.integer({ min: 0, max: 3000 }),
          grandchildren: fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 2 }),
        }),
        { maxLength: 3 },
      ),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 8000 }),
        async (specs, windowMs) => {
          const fired: Fired[] = []
          type Payload = {
            name: string
            children: { delay: number; grandchildren: number[] }[] | number[]
          }
          const handler: TimerHandler<Payload> = (p, { deps, timer, nowMs }) => {
            fired.push({ name: p.name, due: timer.due_at, seq: timer.seq, now: nowMs })
            p.children.forEach((child, i) => {
              const nested = typeof child === 'number' ? { delay: child, grandchildren: [] } : child
              deps.scheduler.schedule('test.node', nowMs + nested.delay, {
                name: `${p.name}.${i}`,
                children: nested.grandchildren,
              })
            })
          }
          const mock = await mockWith((k) => k.register('test.node', handler))
          const { scheduler, clock } = mock.deps
          const start = clock.nowMs()
          specs.forEach((s, i) =>
            scheduler.schedule('test.node', start + s.delay, {
              name: `t${i}`,
              children: s.children,
            }),
          )
          const result = await scheduler.advanceTo(start + windowMs)

          for (let i = 1; i < fired.length; i++) {
            const a = fired[i - 1]!
            const b = fired[i]!
            expect(a.due < b.due || (a.due === b.due && a.seq < b.seq)).toBe(true)
            expect(b.now).toBeGreaterThanOrEqual(a.now)
          }
          for (const f of fired) expect(f.now).toBe(f.due)
          expect(result.fired).toBe(fired.length)
          expect(clock.nowMs()).toBe(start + windowMs)
          const next = scheduler.nextDueMs()
          if (next !== undefined) expect(next).toBeGreaterThan(start + windowMs)
          mock.close()
          mocks.pop()
        },
      ),
      { numRuns: 60 },
    )
  }, 60_000)

  it('gives a timer scheduled by a firing handler a larger seq than the one that fired (seq never reused)', async () => {
    const seqs: number[] = []
    const mock = await mockWith((k) =>
      k.register<{ child: boolean }>('test.seq', (p, { deps, timer, nowMs }) => {
        seqs.push(timer.seq)
        if (!p.child) deps.scheduler.schedule('test.seq', nowMs, { child: true })
      }),
    )
    const { scheduler, clock } = mock.deps
    scheduler.schedule('test.seq', clock.nowMs(), { child: false })
    await scheduler.advanceTo(clock.nowMs())
    expect(seqs).toHaveLength(2)
    expect(seqs[1]!).toBeGreaterThan(seqs[0]!)
  })

  it('gives a timer scheduled after a firing that rolled back a seq above every pending one', async () => {
    const fired: string[] = []
    const mock = await mockWith((k) => {
      k.register<string>('test.note', (name) => void fired.push(name))
      k.register('test.broken', (_p, { deps, nowMs }) => {
        deps.scheduler.schedule('test.note', nowMs, 'rolled back')
        throw new Error('broken handler')
      })
    })
    const { scheduler, clock, db } = mock.deps
    const now = clock.nowMs()
    const pending = getTimer(db, scheduler.schedule('test.note', now + 5_000, 'first'))!.seq
    scheduler.schedule('test.broken', now, null)
    await expect(scheduler.advanceTo(now)).rejects.toThrow(TimerFailuresError)
    const later = getTimer(db, scheduler.schedule('test.note', now + 5_000, 'second'))!.seq
    expect(later).toBeGreaterThan(pending)
    await scheduler.advanceTo(now + 5_000)
    expect(fired).toEqual(['first', 'second'])
  })

  it('hands out the same seqs after a world reset as on a fresh store', async () => {
    const register = (k: TimerKinds) => k.register('test.noop', () => undefined)
    const fresh = await mockWith(register)
    const reset = await mockWith(register)
    const seqsOf = (mock: Mock) =>
      [1, 2, 3].map(
        (i) =>
          getTimer(
            mock.deps.db,
            mock.deps.scheduler.schedule('test.noop', mock.deps.clock.nowMs() + i, null),
          )!.seq,
      )
    for (let i = 0; i < 5; i++)
      reset.deps.scheduler.schedule('test.noop', reset.deps.clock.nowMs(), null)
    await reset.clock.advance(1)
    await reset.reset()
    expect(seqsOf(reset)).toEqual(seqsOf(fresh))
  })

  it('continues the seq on a reopened --db store: above the counter saved at close, and above pending timers after a crash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-seq-'))
    try {
      const file = join(dir, 'state.db')
      const register = (k: TimerKinds) => k.register('test.noop', () => undefined)
      const seqOf = (mock: Mock, dueMs: number) =>
        getTimer(mock.deps.db, mock.deps.scheduler.schedule('test.noop', dueMs, null))!.seq
      // A clean close: the timers fired or were canceled, none pending; the next seq follows the last one.
      const first = await createMock({ db: file, timerKinds: register })
      const t = first.deps.clock.nowMs()
      const fired = [seqOf(first, t), seqOf(first, t)]
      await first.deps.scheduler.advanceTo(t)
      const canceled = getTimer(
        first.deps.db,
        first.deps.scheduler.schedule('test.noop', t + 5, null),
      )!
      first.deps.scheduler.cancel(canceled.id)
      first.close()
      const second = await createMock({ db: file, timerKinds: register })
      const afterClose = seqOf(second, t + 10)
      expect(afterClose).toBeGreaterThan(Math.max(...fired, canceled.seq))
      // A crash (no close): a timer scheduled since the last save is still pending; new ones come after it.
      const pending = seqOf(second, t + 20)
      const third = await createMock({ db: file, timerKinds: register })
      mocks.push(third)
      const afterCrash = seqOf(third, t + 20)
      expect(afterCrash).toBeGreaterThan(pending)
      await third.deps.scheduler.advanceTo(t + 20)
      expect(third.deps.scheduler.pending()).toBe(0)
      second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('fires timers scheduled by a handler inside the window in the same advance', async () => {
    const seen: string[] = []
    const mock = await mockWith((k) =>
      k.register<{ step: number }>('test.chain', (p, { deps, nowMs }) => {
        seen.push(`${p.step}@${nowMs - deps.clock.nowMs()}`)
        if (p.step < 3) deps.scheduler.schedule('test.chain', nowMs + 1000, { step: p.step + 1 })
      }),
    )
    const { scheduler, clock } = mock.deps
    const start = clock.nowMs()
    scheduler.schedule('test.chain', start + 1000, { step: 1 })
    const result = await scheduler.advanceTo(start + 10_000)
    expect(result.fired).toBe(3)
    expect(seen).toEqual(['1@0', '2@0', '3@0'])
    expect(scheduler.pending()).toBe(0)
  })

  it('fires equal due times in scheduling order', async () => {
    const seen: number[] = []
    const mock = await mockWith((k) => k.register<number>('test.same', (n) => void seen.push(n)))
    const { scheduler, clock } = mock.deps
    const due = clock.nowMs() + 5000
    for (const n of [3, 1, 2, 5, 4]) scheduler.schedule('test.same', due, n)
    await scheduler.advanceTo(due)
    expect(seen).toEqual([3, 1, 2, 5, 4])
  })

  it('fires a timer scheduled under a reserved seq where it would have fired if scheduled at the reservation, once', async () => {
    const seen: string[] = []
    const mock = await mockWith((k) => k.register<string>('test.same', (n) => void seen.push(n)))
    const { scheduler, clock } = mock.deps
    const due = clock.nowMs() + 5000
    scheduler.schedule('test.same', due, 'a')
    const reserved = scheduler.reserveSeq()
    scheduler.schedule('test.same', due, 'c')
    expect(() => scheduler.scheduleReserved('test.same', due, reserved + 2, 'x')).toThrow(
      /not reserved/,
    )
    expect(scheduler.scheduleReserved('test.same', due, reserved, 'b')).toBe(true)
    expect(scheduler.scheduleReserved('test.same', due, reserved, 'b')).toBe(false)
    await scheduler.advanceTo(due)
    expect(seen).toEqual(['a', 'b', 'c'])
  })

  it('stops a runaway handler at the loop limit with an error naming the last kinds', async () => {
    const mock = await mockWith(
      (k) =>
        k.register(
          'test.forever',
          (_p, { deps, nowMs }) => void deps.scheduler.schedule('test.forever', nowMs, null),
        ),
      { loopLimit: 50 },
    )
    const { scheduler, clock } = mock.deps
    scheduler.schedule('test.forever', clock.nowMs() + 1, null)
    const error = await scheduler.advanceTo(clock.nowMs() + 1000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SchedulerLoopError)
    expect((error as Error).message).toContain('test.forever')
  })

  it('does not stop a large honest backlog: 20,000 timers across a day under the default guard', async () => {
    let seen = 0
    const mock = await mockWith((k) => k.register('test.backlog', () => void (seen += 1)))
    const { scheduler, clock } = mock.deps
    const start = clock.nowMs()
    // Many instants, and up to 20 timers at each: far more firings in all than the guard's limit.
    for (let i = 0; i < 20_000; i++)
      scheduler.schedule('test.backlog', start + 1000 + (i % 1000) * 86_000, null)
    const result = await scheduler.advanceBy(86_400_000)
    expect(result.fired).toBe(20_000)
    expect(seen).toBe(20_000)
    expect(clock.nowMs()).toBe(start + 86_400_000)
    expect(scheduler.pending()).toBe(0)
  })

  it('counts the guard per virtual instant: as many timers as the limit at one instant, and more at the next, all fire', async () => {
    let seen = 0
    const mock = await mockWith((k) => k.register('test.wide', () => void (seen += 1)), {
      loopLimit: 50,
    })
    const { scheduler, clock } = mock.deps
    const t = clock.nowMs()
    for (let i = 0; i < 50; i++) scheduler.schedule('test.wide', t + 10, null)
    for (let i = 0; i < 50; i++) scheduler.schedule('test.wide', t + 20, null)
    expect((await scheduler.advanceBy(100)).fired).toBe(100)
    expect(seen).toBe(100)
  })

  it('answers a runaway advance with the INTERNAL_ERROR envelope and leaves the clock at the runaway instant', async () => {
    const seen: string[] = []
    const mock = await mockWith(
      (k) => {
        k.register(
          'test.forever',
          (_p, { deps, nowMs }) => void deps.scheduler.schedule('test.forever', nowMs, null),
        )
        k.register<string>('test.note', (s) => void seen.push(s))
      },
      { loopLimit: 50 },
    )
    const { scheduler, clock } = mock.deps
    const t = clock.nowMs()
    scheduler.schedule('test.note', t + 100, 'before')
    scheduler.schedule('test.forever', t + 500, null)
    scheduler.schedule('test.note', t + 900, 'after')
    const res = await mock.app.request('/_mock/clock/advance', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ seconds: 1 }),
    })
    expect(res.status).toBe(500)
    const body = (await res.json()) as { error: { code: string; request_id: string } }
    expect(body.error.code).toBe('INTERNAL_ERROR')
    expect(body.error.request_id).toBeTruthy()
    // Every timer before the runaway instant fired and committed; the clock stands at that instant; later
    // timers and the runaway's own are still pending, nothing due before the clock is left unfired.
    expect(seen).toEqual(['before'])
    expect(clock.nowMs()).toBe(t + 500)
    expect(scheduler.nextDueMs()).toBe(t + 500)
    expect(
      mock.deps.db.stmt('SELECT COUNT(*) AS n FROM timers WHERE due_at < ?').get(t + 500),
    ).toEqual({ n: 0 })
    expect(
      mock.deps.db.stmt("SELECT COUNT(*) AS n FROM timers WHERE kind = 'test.note'").get(),
    ).toEqual({ n: 1 })
  })

  it('cancels a timer by id and the timers of a subject', async () => {
    const seen: string[] = []
    const mock = await mockWith((k) => k.register<string>('test.note', (s) => void seen.push(s)))
    const { scheduler, clock } = mock.deps
    const t = clock.nowMs()
    const a = scheduler.schedule('test.note', t + 10, 'a')
    scheduler.schedule('test.note', t + 20, 'b', { subject: 'run-1' })
    scheduler.schedule('test.note', t + 30, 'c', { subject: 'run-1' })
    scheduler.schedule('test.note', t + 40, 'd')
    expect(scheduler.cancel(a)).toBe(true)
    expect(scheduler.cancel(a)).toBe(false)
    expect(scheduler.cancelSubject('run-1')).toBe(2)
    await scheduler.advanceTo(t + 100)
    expect(seen).toEqual(['d'])
  })

  it('refuses unknown and malformed timer kinds', async () => {
    const mock = await mockWith(() => {})
    expect(() => mock.deps.scheduler.schedule('test.unknown', 0, null)).toThrow(
      /unknown timer kind/,
    )
    expect(() => new TimerKinds().register('NotDotted', () => {})).toThrow(/dotted lowercase/)
    expect(() => new TimerKinds().register('a.b', () => {}).register('a.b', () => {})).toThrow(
      /already registered/,
    )
  })

  it('awaits side effects after each firing commits and before the next timer fires', async () => {
    const order: string[] = []
    const mock = await mockWith((k) =>
      k.register<string>('test.io', (name) => {
        order.push(`fire ${name}`)
        return async () => {
          await new Promise((r) => setImmediate(r))
          order.push(`effect ${name}`)
        }
      }),
    )
    const { scheduler, clock } = mock.deps
    scheduler.schedule('test.io', clock.nowMs() + 1, 'a')
    scheduler.schedule('test.io', clock.nowMs() + 2, 'b')
    await scheduler.advanceTo(clock.nowMs() + 10)
    expect(order).toEqual(['fire a', 'effect a', 'fire b', 'effect b'])
  })

  it('rolls back a failing handler, drops its timer, fires the rest and then reports the failure', async () => {
    const seen: string[] = []
    const mock = await mockWith((k) =>
      k.register<string>('test.maybe', (name, { deps }) => {
        deps.db.stmt("INSERT INTO meta (key, value) VALUES ('written', ?)").run(name)
        if (name === 'bad') throw new Error('handler broke')
        seen.push(name)
      }),
    )
    const { scheduler, clock, db } = mock.deps
    scheduler.schedule('test.maybe', clock.nowMs() + 1, 'bad')
    scheduler.schedule('test.maybe', clock.nowMs() + 2, 'good')
    const error = await scheduler.advanceTo(clock.nowMs() + 10).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimerFailuresError)
    expect(seen).toEqual(['good'])
    expect(db.stmt("SELECT value FROM meta WHERE key = 'written'").get()).toEqual({ value: 'good' })
    expect(scheduler.pending()).toBe(0)
  })

  it('runs a failed timer kind’s recovery in the drop, and drops the timer even when the recovery fails too', async () => {
    const mock = await mockWith((k) =>
      k.register<string>(
        'test.chain',
        (name) => {
          throw new Error(`handler broke on ${name}`)
        },
        {
          afterFailure: (name, { deps }) => {
            deps.db.stmt("INSERT INTO meta (key, value) VALUES ('recovered', ?)").run(name)
            if (name === 'worse') throw new Error('recovery broke')
          },
        },
      ),
    )
    const { scheduler, clock, db } = mock.deps
    scheduler.schedule('test.chain', clock.nowMs() + 1, 'bad')
    const error = await scheduler.advanceTo(clock.nowMs() + 10).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimerFailuresError)
    expect(db.stmt("SELECT value FROM meta WHERE key = 'recovered'").get()).toEqual({
      value: 'bad',
    })
    db.stmt("DELETE FROM meta WHERE key = 'recovered'").run()
    // A recovery that throws rolls back its own work only: the timer is still dropped.
    scheduler.schedule('test.chain', clock.nowMs() + 1, 'worse')
    await scheduler.advanceTo(clock.nowMs() + 10).catch(() => undefined)
    expect(db.stmt("SELECT value FROM meta WHERE key = 'recovered'").get()).toBeUndefined()
    expect(scheduler.pending()).toBe(0)
  })

  it('serializes concurrent advances', async () => {
    const seen: number[] = []
    const mock = await mockWith((k) =>
      k.register<number>('test.slow', (n) => async () => {
        await new Promise((r) => setImmediate(r))
        seen.push(n)
      }),
    )
    const { scheduler, clock } = mock.deps
    const t = clock.nowMs()
    for (let i = 1; i <= 4; i++) scheduler.schedule('test.slow', t + i * 1000, i)
    const results = await Promise.all([scheduler.advanceBy(2000), scheduler.advanceBy(2000)])
    expect(seen).toEqual([1, 2, 3, 4])
    expect(results.map((r) => r.now - t)).toEqual([2000, 4000])
  })

  it('fires a due timer by itself in realtime mode', async () => {
    const fired: number[] = []
    const mock = await mockWith(
      (k) => k.register('test.real', (_p, { nowMs }) => void fired.push(nowMs)),
      { clock: 'realtime' },
    )
    const { scheduler, clock } = mock.deps
    const due = clock.nowMs() + 30
    scheduler.schedule('test.real', due, null)
    for (let i = 0; i < 20 && fired.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(fired).toHaveLength(1)
    expect(fired[0]).toBeGreaterThanOrEqual(due)
    expect(scheduler.pending()).toBe(0)
  })

  it('arms the realtime timer when switching from manual to realtime', async () => {
    const fired: number[] = []
    const mock = await mockWith((k) => k.register('test.switch', () => void fired.push(1)))
    const { scheduler, clock } = mock.deps
    scheduler.schedule('test.switch', clock.nowMs() + 20, null)
    await new Promise((r) => setTimeout(r, 60))
    expect(fired).toHaveLength(0)
    mock.clock.setMode('realtime')
    for (let i = 0; i < 20 && fired.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(fired).toHaveLength(1)
  })
})
