/**
 * Properties of the call-rate decisions (Limits > Call rates) on virtual time: random request sequences charged
 * to random sets of scopes (key, Project, Deployment), fed through decide() the way the rate-limit middleware
 * does (an allowed decision's windows are stored, a refused request stores nothing).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  decide,
  DOCUMENT_RATE_LIMITS,
  effectiveLimit,
  type RateClass,
  type RateDecision,
  type RateScope,
  type RateWindow,
  WINDOW_MS,
} from './rate-limits.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

const MINUTE = 60_000
const START = Date.parse('2026-11-02T09:00:00Z')

type Req = { dt: number; scopes: number[] }
type Logged = { at: number; scopes: RateScope[]; decision: RateDecision }

/** Mostly short gaps (windows fill up), sometimes long ones (windows close). */
const gap = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 90_000 }) },
)
const requests = (scopeCount: number) =>
  fc.array(
    fc.record({
      dt: gap,
      scopes: fc.uniqueArray(fc.nat(scopeCount - 1), { minLength: 1, maxLength: scopeCount }),
    }),
    { maxLength: 120, size: 'max' },
  )
/** Limits 1 to 10, often small so that several scopes are full at once. */
const scopePool = fc
  .array(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 10 })), {
    minLength: 1,
    maxLength: 4,
  })
  .map((limits) => limits.map((limit, i): RateScope => ({ id: `scope-${i}`, limit })))

/** Runs a request sequence through decide() with a store of windows, as the middleware does. */
function simulate(pool: RateScope[], reqs: Req[], start = START) {
  const store = new Map<string, RateWindow>()
  const log: Logged[] = []
  let now = start
  for (const r of reqs) {
    now += r.dt
    const scopes = r.scopes.map((i) => pool[i]!)
    const decision = decide(
      scopes.map((scope) => ({ scope, window: store.get(scope.id) })),
      now,
    )
    if (decision.allowed) for (const { id, window } of decision.windows) store.set(id, window)
    log.push({ at: now, scopes, decision })
  }
  return { store, log }
}

describe('call-rate decisions', () => {
  it('[RATE-001][RATE-002][RATE-003] never allows more than a scope’s limit in one window; windows are 60 s, open at a counted request and do not overlap', () => {
    fc.assert(
      fc.property(scopePool, requests(4), (pool, reqs) => {
        const { log } = simulate(
          pool,
          reqs
            .map((r) => ({ ...r, scopes: r.scopes.filter((i) => i < pool.length) }))
            .filter((r) => r.scopes.length > 0),
        )
        for (const scope of pool) {
          // The allowed requests charged to this scope, with the window each was counted in.
          const charged = log.flatMap(({ at, decision }) =>
            decision.allowed
              ? decision.windows.filter((w) => w.id === scope.id).map((w) => ({ at, w: w.window }))
              : [],
          )
          const byWindow = new Map<number, number[]>()
          for (const { at, w } of charged)
            byWindow.set(w.startMs, [...(byWindow.get(w.startMs) ?? []), at])
          const starts = [...byWindow.keys()]
          for (const [startMs, times] of byWindow) {
            expect(times.length).toBeLessThanOrEqual(scope.limit)
            expect(times[0]).toBe(startMs) // a window opens at its first counted request
            for (const t of times) expect(t - startMs).toBeLessThan(WINDOW_MS)
          }
          for (let i = 1; i < starts.length; i++)
            expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(WINDOW_MS)
          // With fixed windows (README, assumed), any 60 s span can meet at most two windows.
          const times = charged.map((c) => c.at)
          for (const t of times)
            expect(times.filter((u) => u >= t && u < t + MINUTE).length).toBeLessThanOrEqual(
              2 * scope.limit,
            )
        }
      }),
      params,
    )
  })

  it('[RATE-003][RATE-005][RATE-006] refuses only when a charged scope is full; reset_at is after now, within 60 s, and the earliest instant a retry succeeds', () => {
    fc.assert(
      fc.property(scopePool, requests(4), (pool, reqs) => {
        const store = new Map<string, RateWindow>()
        let now = START
        for (const r of reqs) {
          now += r.dt
          const scopes = r.scopes.filter((i) => i < pool.length).map((i) => pool[i]!)
          if (scopes.length === 0) continue
          const ask = (at: number) =>
            decide(
              scopes.map((scope) => ({ scope, window: store.get(scope.id) })),
              at,
            )
          // Full: the scope's stored window is still open and has counted `limit` requests.
          const full = scopes.filter((s) => {
            const w = store.get(s.id)
            return w !== undefined && now < w.startMs + WINDOW_MS && w.count >= s.limit
          })
          const d = ask(now)
          expect(d.allowed).toBe(full.length === 0)
          if (d.allowed) {
            expect(d.windows.map((w) => w.id).sort()).toEqual(scopes.map((s) => s.id).sort())
            for (const { id, window } of d.windows) store.set(id, window)
          } else {
            expect(d.resetAtMs).toBeGreaterThan(now)
            expect(d.resetAtMs).toBeLessThanOrEqual(now + MINUTE)
            const named = full.find((s) => s.id === d.scope)
            expect(named?.limit).toBe(d.limit)
            // Nothing else happens in between: a retry one millisecond early is still refused, at reset_at it passes.
            expect(ask(d.resetAtMs - 1).allowed).toBe(false)
            expect(ask(d.resetAtMs).allowed).toBe(true)
          }
        }
      }),
      params,
    )
  })

  it('[RATE-003] scopes count independently: traffic on other scopes never changes a scope’s decisions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.record({ dt: gap, other: fc.boolean() }), { maxLength: 120, size: 'max' }),
        (limitA, limitB, mixed) => {
          const a: RateScope = { id: 'key:a', limit: limitA }
          const b: RateScope = { id: 'deployment:b', limit: limitB }
          const both = simulate(
            [a, b],
            mixed.map((m) => ({ dt: m.dt, scopes: [m.other ? 1 : 0] })),
          )
          // The same A requests at the same instants, without the B traffic.
          const aOnly: Req[] = []
          let pending = 0
          for (const m of mixed) {
            pending += m.dt
            if (!m.other) {
              aOnly.push({ dt: pending, scopes: [0] })
              pending = 0
            }
          }
          const alone = simulate([a, b], aOnly)
          const aDecisions = (log: Logged[]) =>
            log.filter((l) => l.scopes[0]!.id === a.id).map((l) => [l.at, l.decision.allowed])
          expect(aDecisions(both.log)).toEqual(aDecisions(alone.log))
        },
      ),
      params,
    )
  })

  it('[RATE-001][RATE-002][RATE-006] at the document’s limits the first 10 accept / 60 read calls of a minute pass, the next is refused until the window resets', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RateClass>('accept', 'read'),
        fc.integer({ min: 0, max: MINUTE - 1 }),
        fc.array(fc.integer({ min: 0, max: MINUTE - 1 }), { minLength: 70, maxLength: 70 }),
        (cls, extraAt, offsets) => {
          const limit = effectiveLimit(cls)
          expect(limit).toBe(cls === 'accept' ? 10 : 60)
          const scope: RateScope = { id: `key:k:${cls}`, limit }
          const times = [0, ...offsets.slice(0, limit - 1).sort((x, y) => x - y)]
          let window: RateWindow | undefined
          for (const t of times) {
            const d = decide([{ scope, window }], START + t)
            expect(d.allowed).toBe(true)
            if (d.allowed) window = d.windows[0]!.window
          }
          const extra = Math.max(extraAt, times[times.length - 1]!)
          const refused = decide([{ scope, window }], START + extra)
          expect(refused).toEqual({
            allowed: false,
            resetAtMs: START + MINUTE,
            limit,
            scope: scope.id,
          })
          expect(decide([{ scope, window }], START + MINUTE).allowed).toBe(true)
        },
      ),
      params,
    )
  })

  it('[RATE-004] a key or Deployment override only lowers the limit, and the lowered limit is what is enforced', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RateClass>('accept', 'read'),
        fc.option(fc.integer({ min: -5, max: 500 }), { nil: undefined }),
        fc.boolean(),
        (cls, override, asNull) => {
          const doc = DOCUMENT_RATE_LIMITS[cls]
          const given = override === undefined && asNull ? null : override
          const limit = effectiveLimit(cls, given)
          expect(limit).toBeLessThanOrEqual(doc)
          expect(limit).toBeGreaterThanOrEqual(1)
          if (given != null && given >= 1 && given <= doc) expect(limit).toBe(given)
          if (given == null || given <= 0 || given >= doc) expect(limit).toBe(doc)
          const scope: RateScope = { id: 'deployment:d', limit }
          let window: RateWindow | undefined
          let allowed = 0
          for (let i = 0; i < doc + 1; i++) {
            const d = decide([{ scope, window }], START + i)
            if (d.allowed) {
              allowed++
              window = d.windows[0]!.window
            }
          }
          expect(allowed).toBe(limit)
        },
      ),
      params,
    )
  })
})
