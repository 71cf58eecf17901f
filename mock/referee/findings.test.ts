import fc from 'fast-check'
import { expect, it } from 'vitest'
import { Findings } from './findings.js'
import { RULES, violationOf, type Found, type RuleName, type Seen } from './rules.js'

const seen: fc.Arbitrary<Seen> = fc.record({
  method: fc.constantFrom('GET', 'POST'),
  path: fc.string({ maxLength: 12 }).map((s) => `/v1/${s}`),
  request_id: fc.string({ maxLength: 8 }),
  atMs: fc.integer({ min: 0, max: 4_000_000_000_000 }),
})
const found: fc.Arbitrary<Found> = fc.record({
  rule: fc.constantFrom(...(Object.keys(RULES) as RuleName[])),
  key: fc.string({ maxLength: 6 }),
  requests: fc.array(seen, { minLength: 1, maxLength: 2 }),
})

it('[RATE-007][RETRY-001] keeps the newest findings up to its capacity, oldest first, reported as judged, and counts the ones it dropped', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.array(fc.oneof(found, fc.constant('clear' as const)), { maxLength: 30 }),
      (capacity, steps) => {
        const findings = new Findings(capacity)
        let model: Found[] = []
        for (const step of steps) {
          if (step === 'clear') {
            findings.clear()
            model = []
          } else {
            findings.push(step)
            model.push(step)
          }
          expect(findings.list()).toEqual(model.slice(-capacity).map(violationOf))
          expect(findings.dropped).toBe(Math.max(0, model.length - capacity))
        }
      },
    ),
    { numRuns: 200 },
  )
})
