import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  budgetRefusal,
  COST_CATEGORIES,
  EXECUTION_SHARES,
  roundSu,
  splitByCategory,
  utcDayWindow,
  utcMonthWindow,
} from './budgets.js'

const DAY = 86_400_000
/** 2000-01-01 .. 2100-01-01 */
const instant = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 })

describe('budget windows and decisions', () => {
  it('[BUD-005] a UTC day window holds now, starts at midnight UTC and lasts 24 hours', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const w = utcDayWindow(now)
        expect(w.startMs <= now && now < w.endMs).toBe(true)
        expect(w.endMs - w.startMs).toBe(DAY)
        expect(new Date(w.startMs).toISOString()).toMatch(/T00:00:00\.000Z$/)
      }),
    )
  })

  it('[BUD-005] a UTC month window holds now and runs from the 1st to the next 1st', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const w = utcMonthWindow(now)
        expect(w.startMs <= now && now < w.endMs).toBe(true)
        expect(new Date(w.startMs).toISOString()).toMatch(/-01T00:00:00\.000Z$/)
        expect(new Date(w.endMs).toISOString()).toMatch(/-01T00:00:00\.000Z$/)
        expect(utcMonthWindow(w.endMs).startMs).toBe(w.endMs)
      }),
    )
    expect(new Date(utcMonthWindow(Date.parse('2028-02-29T23:59:59Z')).endMs).toISOString()).toBe(
      '2028-03-01T00:00:00.000Z',
    )
    expect(new Date(utcMonthWindow(Date.parse('2026-12-31T23:59:59Z')).endMs).toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    )
  })

  it('[BUD-005] windows asked for again and again (the kept last one) are still those of each instant', () => {
    // utcDayWindow and utcMonthWindow keep their last window: instants inside it, on its edges and just
    // past them, in any order, must each get the window that holds them.
    const fresh = (now: number, day: boolean) => {
      const d = new Date(now)
      const [y, m, dd] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()]
      return day
        ? { startMs: Date.UTC(y, m, dd), endMs: Date.UTC(y, m, dd + 1) }
        : { startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) }
    }
    const nearby = instant.chain((base) =>
      fc.array(
        fc.oneof(
          fc.constant(base),
          fc.integer({ min: -2 * DAY, max: 2 * DAY }).map((d) => base + d),
          fc.constantFrom(-1, 0, 1).map((d) => utcDayWindow(base).endMs + d),
          fc.constantFrom(-1, 0, 1).map((d) => utcMonthWindow(base).startMs + d),
        ),
        { minLength: 1, maxLength: 20 },
      ),
    )
    fc.assert(
      fc.property(nearby, (instants) => {
        for (const now of instants) {
          expect(utcDayWindow(now)).toEqual(fresh(now, true))
          expect(utcMonthWindow(now)).toEqual(fresh(now, false))
        }
      }),
    )
  })

  it('[BUD-003] reaching the daily budget exactly is allowed, passing it is refused', () => {
    const base = {
      dailyBudgetSu: 1000,
      monthlyBudgetSu: 30000,
      month: { settledSu: 0, reservedSu: 0 },
    }
    expect(budgetRefusal({ ...base, day: { settledSu: 900, reservedSu: 0 }, requestSu: 100 })).toBe(
      null,
    )
    expect(
      budgetRefusal({ ...base, day: { settledSu: 900, reservedSu: 0.5 }, requestSu: 100 }),
    ).toMatchObject({ window: 'DAILY', budget_su: 1000, spent_su: 900, reserved_su: 0.5 })
  })

  it('[BUD-004] the month is reported when both windows would pass', () => {
    expect(
      budgetRefusal({
        dailyBudgetSu: 10,
        monthlyBudgetSu: 20,
        day: { settledSu: 10, reservedSu: 0 },
        month: { settledSu: 20, reservedSu: 0 },
        requestSu: 1,
      })?.window,
    ).toBe('MONTHLY')
  })

  it('[BUD-006] category parts are never negative and add up to the spend', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e5, noNaN: true }), (su0) => {
        const su = roundSu(su0)
        const parts = splitByCategory(su)
        for (const c of COST_CATEGORIES) {
          expect(parts[c]).toBeGreaterThanOrEqual(0)
          if (EXECUTION_SHARES[c] === 0) expect(parts[c]).toBe(0)
        }
        expect(roundSu(COST_CATEGORIES.reduce((s, c) => s + parts[c], 0))).toBe(su)
      }),
    )
  })

  it('[BUD-003][BUD-005] random acceptances and settlements over UTC days never settle more than the daily budget in a day', () => {
    type Ev =
      | { kind: 'accept'; su: number }
      | { kind: 'settle'; pick: number; share: number }
      | { kind: 'wait'; ms: number }
    const ev: fc.Arbitrary<Ev> = fc.oneof(
      fc.record({ kind: fc.constant('accept' as const), su: fc.integer({ min: 1, max: 100 }) }),
      fc.record({
        kind: fc.constant('settle' as const),
        pick: fc.nat(),
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 2 * DAY }) }),
    )
    fc.assert(
      fc.property(instant, fc.array(ev, { maxLength: 80 }), (start, events) => {
        const daily = 250
        let now = start
        const open: number[] = []
        const settled: { at: number; su: number }[] = []
        const inWindow = (w: { startMs: number; endMs: number }) =>
          settled.filter((s) => s.at >= w.startMs && s.at < w.endMs).reduce((a, s) => a + s.su, 0)
        for (const e of events) {
          if (e.kind === 'wait') now += e.ms
          else if (e.kind === 'settle' && open.length > 0) {
            const [max] = open.splice(e.pick % open.length, 1)
            settled.push({ at: now, su: roundSu(max! * e.share) })
          } else if (e.kind === 'accept') {
            const reserved = open.reduce((a, b) => a + b, 0)
            const refusal = budgetRefusal({
              dailyBudgetSu: daily,
              monthlyBudgetSu: 1e9,
              day: { settledSu: inWindow(utcDayWindow(now)), reservedSu: reserved },
              month: { settledSu: inWindow(utcMonthWindow(now)), reservedSu: reserved },
              requestSu: e.su,
            })
            if (!refusal) open.push(e.su)
            else expect(inWindow(utcDayWindow(now)) + reserved + e.su).toBeGreaterThan(daily)
          }
          expect(inWindow(utcDayWindow(now))).toBeLessThanOrEqual(daily + 1e-6)
        }
        for (const s of settled)
          expect(inWindow(utcDayWindow(s.at))).toBeLessThanOrEqual(daily + 1e-6)
      }),
      { numRuns: 200 },
    )
  })
})
