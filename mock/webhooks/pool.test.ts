import { describe, expect, it } from 'vitest'
import { silentLog } from '../util/log.js'
import { DEFAULT_SEND_CONCURRENCY, DEFAULT_SENDS_PER_PROJECT, DeliveryPool } from './pool.js'

/** A send the test finishes by hand. */
function gate() {
  let open!: () => void
  const done = new Promise<void>((r) => (open = r))
  const seen = { started: false, aborted: false, finished: false }
  const task = async (signal: AbortSignal) => {
    seen.started = true
    signal.addEventListener('abort', () => {
      seen.aborted = true
      open()
    })
    await done
    seen.finished = true
  }
  return { task, open: () => open(), seen }
}

const tick = () => new Promise((r) => setImmediate(r))
/** A freed slot is filled once the turn of the event loop that freed it is over (pool.ts pumpSoon). */
const nextTurn = async () => {
  await tick()
  await tick()
}

describe('delivery pool', () => {
  it('runs at most `limit` sends at once and starts the waiting ones in arrival order', async () => {
    expect([DEFAULT_SEND_CONCURRENCY, DEFAULT_SENDS_PER_PROJECT]).toEqual([64, 10])
    const pool = new DeliveryPool(silentLog, { limit: 2 })
    const sends = [gate(), gate(), gate(), gate()]
    sends.forEach((s, i) => pool.submit(`d${i}`, 'p', s.task))
    expect(sends.map((s) => s.seen.started)).toEqual([true, true, false, false])
    expect([pool.active, pool.queued]).toEqual([2, 2])
    sends[1]!.open()
    await nextTurn()
    expect(sends.map((s) => s.seen.started)).toEqual([true, true, true, false])
    sends[0]!.open()
    await nextTurn()
    expect(sends.map((s) => s.seen.started)).toEqual([true, true, true, true])
    sends[2]!.open()
    sends[3]!.open()
    await pool.idle()
    expect([pool.active, pool.queued]).toEqual([0, 0])
  })

  it('fills the slots freed in one turn of the event loop together, after that turn, oldest first', async () => {
    const pool = new DeliveryPool(silentLog, { limit: 2 })
    const sends = [gate(), gate(), gate(), gate(), gate()]
    sends.forEach((s, i) => pool.submit(`d${i}`, 'p', s.task))
    sends[0]!.open()
    sends[1]!.open()
    // Both answers are handled (their outcomes recorded) before any waiting send starts...
    await Promise.all([pool.pending('d0'), pool.pending('d1')])
    expect(sends.map((s) => s.seen.started)).toEqual([true, true, false, false, false])
    // ...then the two oldest waiting sends start together.
    await nextTurn()
    expect(sends.map((s) => s.seen.started)).toEqual([true, true, true, true, false])
    for (const s of sends) s.open()
    await pool.idle()
  })

  it('gives one Project at most its share of the slots: the others are not queued behind it', async () => {
    const pool = new DeliveryPool(silentLog, { limit: 4, perGroup: 2 })
    const a = [gate(), gate(), gate()]
    const c = [gate(), gate()]
    a.forEach((s, i) => pool.submit(`a${i}`, 'project-a', s.task))
    c.forEach((s, i) => pool.submit(`c${i}`, 'project-c', s.task))
    // Project A's third send waits for one of its own; Project C's start at once.
    expect(a.map((s) => s.seen.started)).toEqual([true, true, false])
    expect(c.map((s) => s.seen.started)).toEqual([true, true])
    c[0]!.open()
    await nextTurn()
    expect(a[2]!.seen.started).toBe(false)
    a[0]!.open()
    await nextTurn()
    expect(a[2]!.seen.started).toBe(true)
    for (const s of [...a, ...c]) s.open()
    await pool.idle()
  })

  it('lends a Project free slots beyond its share, never the last `perGroup` of them', async () => {
    const pool = new DeliveryPool(silentLog, { limit: 6, perGroup: 2 })
    const a = Array.from({ length: 7 }, gate)
    a.forEach((s, i) => pool.submit(`a${i}`, 'project-a', s.task))
    // Alone, Project A borrows up to limit - perGroup = 4 slots; 2 stay free for another Project's share.
    expect(a.map((s) => s.seen.started)).toEqual([true, true, true, true, false, false, false])
    const c = [gate(), gate(), gate()]
    c.forEach((s, i) => pool.submit(`c${i}`, 'project-c', s.task))
    // Project C gets its share at once; beyond it, it would take the last free slots: it waits.
    expect(c.map((s) => s.seen.started)).toEqual([true, true, false])
    expect([pool.active, pool.queued]).toEqual([6, 4])
    // A freed slot of A's: nobody may borrow it (it is one of the last 2), and A is over its share.
    a[0]!.open()
    await nextTurn()
    expect([pool.active, pool.queued]).toEqual([5, 4])
    // A freed slot of C's: C is under its share again, so its waiting send starts.
    c[0]!.open()
    await nextTurn()
    expect(c[2]!.seen.started).toBe(true)
    expect(a[4]!.seen.started).toBe(false)
    for (const s of [...a, ...c]) s.open()
    await pool.idle()
    expect(a.every((s) => s.seen.finished)).toBe(true)
  })

  it('tells whether a key has a send queued or running, and settles when it is done', async () => {
    const pool = new DeliveryPool(silentLog, { limit: 1 })
    const a = gate()
    const b = gate()
    pool.submit('a', 'p', a.task)
    pool.submit('b', 'p', b.task)
    const waitB = pool.pending('b')
    expect(waitB).toBeInstanceOf(Promise)
    expect(pool.pending('c')).toBeUndefined()
    let settled = false
    void waitB!.then(() => (settled = true))
    a.open()
    await nextTurn()
    expect(b.seen.started).toBe(true)
    expect(settled).toBe(false)
    b.open()
    await waitB
    expect(b.seen.finished).toBe(true)
    expect(pool.pending('b')).toBeUndefined()
  })

  it('aborts running sends and drops waiting ones (reset, close), settling every wait', async () => {
    const pool = new DeliveryPool(silentLog, { limit: 1 })
    const a = gate()
    const b = gate()
    pool.submit('a', 'p', a.task)
    pool.submit('b', 'p', b.task)
    pool.abortAll()
    await Promise.all([pool.pending('a'), pool.pending('b'), pool.idle()])
    expect(a.seen.aborted).toBe(true)
    expect(b.seen.started).toBe(false)
    expect([pool.active, pool.queued]).toEqual([0, 0])
  })

  it('keeps going when a send throws', async () => {
    const errors: string[] = []
    const log = { ...silentLog, error: (msg: string) => void errors.push(msg) }
    const pool = new DeliveryPool(log, { limit: 1 })
    pool.submit('x', 'p', () => Promise.reject(new Error('broken')))
    const ok = gate()
    pool.submit('y', 'p', ok.task)
    await nextTurn()
    expect(errors).toEqual(['webhook send failed'])
    expect(ok.seen.started).toBe(true)
    ok.open()
    await pool.idle()
  })
})
