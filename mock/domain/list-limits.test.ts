import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fittingCount, MAX_LIST_BYTES, pageOverheadBytes } from './list-limits.js'

describe('list limits', () => {
  it('[SIZE-014] keeps a page with its overhead within 256 KiB, and always gives at least one item', () => {
    const item = { text: 'a'.repeat(60_000) }
    const overhead = pageOverheadBytes({ outputs: [], next_cursor: null })
    const n = fittingCount([item, item, item, item, item], overhead)
    expect(n).toBe(4)
    const body = JSON.stringify({ outputs: Array(n).fill(item), next_cursor: 'c'.repeat(200) })
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_LIST_BYTES)
    expect(fittingCount([{ text: 'a'.repeat(300_000) }], overhead)).toBe(1)
    expect(fittingCount([], overhead)).toBe(0)
  })

  it('[SIZE-014] counts the same with the overhead measured on demand, and measures it only to weigh a second item', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 200_000 }),
        (sizes, overhead) => {
          const items = sizes.map((n) => ({ text: 'a'.repeat(n) }))
          let measured = 0
          const lazy = fittingCount(items, () => {
            measured += 1
            return overhead
          })
          expect(lazy).toBe(fittingCount(items, overhead))
          expect(measured).toBe(items.length > 1 ? 1 : 0)
        },
      ),
      { numRuns: 60 },
    )
  })
})
