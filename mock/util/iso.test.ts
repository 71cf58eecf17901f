import fc from 'fast-check'
import { expect, it } from 'vitest'
import { iso } from './iso.js'

it('[RES-002] formats an instant as Date#toISOString does, kept or not, and null as null', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: -8.64e15, max: 8.64e15 }), { maxLength: 3000 }),
      (instants) => {
        for (const ms of instants) expect(iso(ms)).toBe(new Date(ms).toISOString())
        // Again, now that the last ones are kept.
        for (const ms of instants.slice(-50)) expect(iso(ms)).toBe(new Date(ms).toISOString())
      },
    ),
    { numRuns: 20 },
  )
  expect(iso(null)).toBeNull()
  expect(() => iso(Number.NaN)).toThrow(RangeError)
})
