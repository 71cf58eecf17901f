import { describe, expect, it } from 'vitest'
import { Clock, memoryClockStore } from './clock.js'

const START = Date.parse('2026-11-02T09:00:00Z')

/** A wall clock the test moves by hand. */
function fakeWall(start = 1_000_000) {
  let t = start
  return { read: () => t, tick: (ms: number) => (t += ms) }
}

describe('clock', () => {
  it('stays still in manual mode until moved', () => {
    const wall = fakeWall()
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'manual' }, wall.read)
    wall.tick(5000)
    expect(clock.nowMs()).toBe(START)
    expect(clock.moveTo(START + 1000)).toBe(START + 1000)
    expect(clock.iso()).toBe('2026-11-02T09:00:01.000Z')
  })

  it('follows the wall clock from the start time in realtime mode', () => {
    const wall = fakeWall()
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'realtime' }, wall.read)
    expect(clock.nowMs()).toBe(START)
    wall.tick(2500)
    expect(clock.nowMs()).toBe(START + 2500)
  })

  it('[RET-001] reads one instant inside pinned(): a request computes created_at and expiries from the same now', () => {
    let t = 1_000_000
    const clock = new Clock(
      memoryClockStore(),
      { startMs: START, mode: 'realtime' },
      () => (t += 7),
    )
    const [a, b] = clock.pinned(() => [clock.nowMs(), clock.nowMs()])
    expect(b).toBe(a)
    expect(clock.pinned(() => clock.pinned(() => clock.nowMs()))).toBeGreaterThan(a!)
    expect(clock.nowMs()).toBeGreaterThan(b!)
  })

  it('keeps now continuous when switching modes both ways', () => {
    const wall = fakeWall()
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'realtime' }, wall.read)
    wall.tick(1000)
    clock.setMode('manual')
    expect(clock.nowMs()).toBe(START + 1000)
    wall.tick(60_000)
    expect(clock.nowMs()).toBe(START + 1000)
    clock.setMode('realtime')
    expect(clock.nowMs()).toBe(START + 1000)
    wall.tick(10)
    expect(clock.nowMs()).toBe(START + 1010)
  })

  it('never moves backwards: moveTo an earlier time and a wall clock step back are ignored', () => {
    const wall = fakeWall()
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'realtime' }, wall.read)
    wall.tick(500)
    expect(clock.moveTo(START)).toBe(START + 500)
    wall.tick(-300)
    expect(clock.nowMs()).toBe(START + 500)
  })

  it('moves realtime time forward by shifting its offset', () => {
    const wall = fakeWall()
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'realtime' }, wall.read)
    clock.moveTo(START + 3_600_000)
    wall.tick(1)
    expect(clock.nowMs()).toBe(START + 3_600_001)
  })

  it('persists its state and resumes from the store', () => {
    const wall = fakeWall()
    const store = memoryClockStore()
    const a = new Clock(store, { startMs: START, mode: 'manual' }, wall.read)
    a.moveTo(START + 42_000)
    const b = new Clock(store, { startMs: 0, mode: 'realtime' }, wall.read)
    expect(b.mode).toBe('manual')
    expect(b.nowMs()).toBe(START + 42_000)
  })

  it('goes back to the start only on resetTo, and tells listeners about a mode change', () => {
    const clock = new Clock(memoryClockStore(), { startMs: START, mode: 'manual' })
    const modes: string[] = []
    clock.onModeChange((m) => modes.push(m))
    clock.moveTo(START + 99_000)
    clock.resetTo(START)
    expect(clock.nowMs()).toBe(START)
    clock.setMode('realtime')
    clock.setMode('realtime')
    clock.setMode('manual')
    expect(modes).toEqual(['realtime', 'manual'])
  })
})
