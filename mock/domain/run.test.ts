/**
 * Properties of the Run rules: the JSON limits of Run input (depth 16, 10,000 array elements in total), how a
 * Run ends from its contract and the outputs produced, Run content retention, the whole-Run queue total and
 * progress.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  JSON_MAX_ARRAY_ELEMENTS as INPUT_MAX_ARRAY_ELEMENTS,
  JSON_MAX_DEPTH as INPUT_MAX_DEPTH,
  jsonLimitProblem,
} from './json-limits.js'
import {
  DEFAULT_RUN_RETENTION_DAYS as DEFAULT_RETENTION_DAYS,
  runContentExpired,
  runExpiresAt,
} from './retention.js'
import {
  type ContractEntry,
  type ProducedOutput,
  progressAfterStep,
  RUN_QUEUE_TOTAL_S,
  runEnd,
  runQueueWindowS,
} from './run.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

const DAY = 86_400_000
/** 2000-01-01 .. 2100-01-01 */
const instant = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 })

/** A plain recursive count: depth in containers ({} is 1, a scalar 0) and array elements over all arrays. */
function shape(v: unknown): { depth: number; elements: number } {
  if (v === null || typeof v !== 'object') return { depth: 0, elements: 0 }
  const kids = (Array.isArray(v) ? v : Object.values(v)).map(shape)
  return {
    depth: 1 + Math.max(0, ...kids.map((k) => k.depth)),
    elements: (Array.isArray(v) ? v.length : 0) + kids.reduce((n, k) => n + k.elements, 0),
  }
}

/** `inner` wrapped in `wrappers` containers (true: a one-element array, false: a one-key object). */
const wrap = (inner: unknown, wrappers: boolean[]): unknown =>
  wrappers.reduce<unknown>((v, asArray) => (asArray ? [v] : { k: v }), inner)

/** Values around both limits: nestings of 10 to 20 containers, and arrays of 9,995 to 10,005 elements in total. */
const deepValue = fc
  .tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 18 }))
  .map(([inner, wrappers]) => wrap(inner, wrappers))
const manyElements = fc
  .tuple(
    fc.integer({ min: 9_995, max: 10_005 }),
    fc.uniqueArray(fc.integer({ min: 1, max: 9_994 }), { maxLength: 3 }),
    fc.array(fc.boolean(), { maxLength: 6 }),
  )
  .map(([total, cuts, wrappers]) => {
    const at = [0, ...cuts.sort((a, b) => a - b), total]
    const parts = at.slice(1).map((end, i) => new Array<number>(end - at[i]!).fill(0))
    return wrap(Object.fromEntries(parts.map((p, i) => [`a${i}`, p])), wrappers)
  })

describe('Run rules', () => {
  it('[RUN-026][RUN-027] refuses Run input exactly when it is deeper than 16 or has more than 10,000 array elements', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 5 }), deepValue, manyElements), (v) => {
        const { depth, elements } = shape(v)
        const problem = jsonLimitProblem(v)
        const tooDeep = depth > 16
        const tooMany = elements > 10_000
        expect(problem === undefined).toBe(!tooDeep && !tooMany)
        if (problem?.reason === 'DEPTH') {
          expect(tooDeep).toBe(true)
          expect(problem.max_depth).toBe(16)
        }
        if (problem?.reason === 'ARRAY_ELEMENTS') {
          expect(tooMany).toBe(true)
          expect(problem.max_array_elements).toBe(10_000)
        }
      }),
      params,
    )
  })

  it('[RUN-026][RUN-027] allows exactly the limits and refuses one more; a hostile nesting is refused, not a stack overflow', () => {
    expect(INPUT_MAX_DEPTH).toBe(16)
    expect(INPUT_MAX_ARRAY_ELEMENTS).toBe(10_000)
    const nest = (n: number) => wrap(1, new Array<boolean>(n).fill(false))
    expect(jsonLimitProblem(nest(16))).toBeUndefined()
    expect(jsonLimitProblem(nest(17))).toEqual({ reason: 'DEPTH', max_depth: 16 })
    expect(jsonLimitProblem([new Array(9_999).fill(null)])).toBeUndefined() // 1 + 9,999 elements
    expect(jsonLimitProblem([new Array(10_000).fill(null)])).toEqual({
      reason: 'ARRAY_ELEMENTS',
      max_array_elements: 10_000,
    })
    expect(jsonLimitProblem(nest(200_000))).toEqual({ reason: 'DEPTH', max_depth: 16 })
  })

  it('[STATE-016][STATE-017][STATE-018][STATE-028] ends a Run by its contract: required outputs decide FAILED, optional failures give PARTIALLY_SUCCEEDED only when allowed', () => {
    const keys = ['a', 'b', 'c', 'd', 'e'] as const
    const codes = ['OUTPUT_URL_INVALID', 'OUTPUT_CONTAINS_CREDENTIALS', 'INVALID_FILENAME']
    const contract = fc
      .uniqueArray(fc.record({ key: fc.constantFrom(...keys), required: fc.boolean() }), {
        selector: (c) => c.key,
        maxLength: 4,
      })
      .map((cs): ContractEntry[] => cs)
    const produced = fc.array(
      fc.record({
        key: fc.constantFrom(...keys),
        error: fc.option(fc.record({ code: fc.constantFrom(...codes) }), { nil: null, freq: 3 }),
      }),
      { maxLength: 6 },
    )
    fc.assert(
      fc.property(contract, fc.boolean(), produced, (cs, allowsPartial, outs: ProducedOutput[]) => {
        const end = runEnd(cs, allowsPartial, outs)
        const required = cs.filter((c) => c.required).map((c) => c.key)
        const failed = outs.filter((o) => o.error !== null)
        const failedRequired = failed.filter((o) => required.includes(o.key))
        const missing = required.filter((k) => !outs.some((o) => o.key === k && o.error === null))

        // SUCCEEDED exactly when nothing failed and every required output was produced.
        expect(end.status === 'SUCCEEDED').toBe(failed.length === 0 && missing.length === 0)
        // PARTIALLY_SUCCEEDED exactly when allowed, all required outputs are good and only optional ones failed.
        expect(end.status === 'PARTIALLY_SUCCEEDED').toBe(
          allowsPartial && failed.length > 0 && failedRequired.length === 0 && missing.length === 0,
        )
        if (end.status !== 'FAILED') return
        if (failedRequired.length > 0) {
          // A required output broke a result rule: the Run fails with that rule's code.
          expect(failedRequired.map((o) => o.error!.code)).toContain(end.code)
        } else if (missing.length > 0) {
          expect(end.code).toBe('OUTPUT_MISSING')
          for (const k of missing) expect(end.message).toContain(k)
        } else {
          // Only optional outputs failed and the publication does not allow partial results.
          expect(allowsPartial).toBe(false)
          expect(failed.map((o) => o.error!.code)).toContain(end.code)
        }
      }),
      params,
    )
  })

  it('[RET-010][RET-013] Run content expires exactly retention_days after the Run ends, never while it runs, and stays expired', () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: -2 * DAY, max: 40 * DAY }),
        fc.nat(10 * DAY),
        (completedAt, days, offset, later) => {
          const expiresAt = runExpiresAt(completedAt, days)
          expect(expiresAt).toBe(completedAt + days * DAY)
          expect(expiresAt!).toBeLessThanOrEqual(runExpiresAt(completedAt, DEFAULT_RETENTION_DAYS)!)
          if (days < 30) expect(runExpiresAt(completedAt, days + 1)!).toBeGreaterThan(expiresAt!)
          const now = completedAt + offset
          expect(runContentExpired(completedAt, days, now)).toBe(now >= expiresAt!)
          if (runContentExpired(completedAt, days, now))
            expect(runContentExpired(completedAt, days, now + later)).toBe(true)
          expect(runExpiresAt(null, days)).toBeNull()
          expect(runContentExpired(null, days, now + later)).toBe(false)
        },
      ),
      params,
    )
    expect(DEFAULT_RETENTION_DAYS).toBe(30)
  })

  it('[TIME-001] the queue time of all steps of a Run together never passes 3,600 seconds, and a step gets its full queue_seconds while that much is left', () => {
    expect(RUN_QUEUE_TOTAL_S).toBe(3600)
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 600 }),
            fc.oneof(fc.constant(100), fc.integer({ min: 0, max: 100 })),
          ),
          {
            minLength: 1,
            maxLength: 40,
            size: 'max',
          },
        ),
        (steps) => {
          let queued = 0
          for (const [queueSeconds, percent] of steps) {
            const window = runQueueWindowS(queueSeconds, queued)
            expect(window).toBeGreaterThanOrEqual(0)
            expect(window).toBeLessThanOrEqual(queueSeconds)
            if (3600 - queued >= queueSeconds) expect(window).toBe(queueSeconds)
            else expect(window).toBe(3600 - queued)
            // The step waits some part of its window (often all of it).
            queued += Math.floor((window * percent) / 100)
            expect(queued).toBeLessThanOrEqual(3600)
          }
        },
      ),
      params,
    )
  })

  it('[RUN-007] progress counts up one per finished step, never past total, and reaches total after every step', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 80 }),
        (total, steps) => {
          let completed = 0
          for (let i = 0; i < steps; i++) {
            const next = progressAfterStep(completed, total)
            expect(next).toBeGreaterThanOrEqual(completed)
            expect(next).toBeLessThanOrEqual(total)
            expect(next).toBe(completed < total ? completed + 1 : total)
            completed = next
          }
          expect(completed).toBe(Math.min(steps, total))
        },
      ),
      params,
    )
  })
})
