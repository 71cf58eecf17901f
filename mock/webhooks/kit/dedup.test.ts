/** The receiver kit's Deduplicator (Webhook notifications 6; Retention "Webhook dedup ids"). */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEDUP_RETENTION_MS, Deduplicator } from './dedup.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)

describe('Deduplicator', () => {
  it('[WHN-014][WHN-015] answers new, then duplicate for the same body and conflict for another', () => {
    let now = 0
    const dedup = new Deduplicator({ now: () => now })
    expect(dedup.seen('e1', '{"a":1}')).toBe('new')
    now += 1000
    expect(dedup.seen('e1', '{"a":1}')).toBe('duplicate')
    expect(dedup.seen('e1', Buffer.from('{"a":1}'))).toBe('duplicate')
    expect(dedup.seen('e1', '{"a": 1}')).toBe('conflict')
    expect(dedup.seen('e2', '{"a": 1}')).toBe('new')
  })

  it('[WHN-014][RET-011] forgets an id after 30 days, not before', () => {
    let now = 1_000_000
    const dedup = new Deduplicator({ now: () => now })
    expect(dedup.seen('e1', 'x')).toBe('new')
    now += DEDUP_RETENTION_MS - 1
    expect(dedup.seen('e1', 'y')).toBe('conflict')
    now += 1
    expect(dedup.seen('e1', 'y')).toBe('new')
  })

  it('[WHN-014] forget() lets a notice whose storage failed count as new again', () => {
    const dedup = new Deduplicator({ now: () => 0 })
    expect(dedup.seen('e1', 'x')).toBe('new')
    dedup.forget('e1')
    expect(dedup.seen('e1', 'x')).toBe('new')
  })

  it('[WHN-014][WHN-015] agrees with a plain map model on any sequence inside the retention', () => {
    const step = fc.record({
      id: fc.constantFrom('a', 'b', 'c'),
      body: fc.constantFrom('x', 'y'),
      advanceMs: fc.integer({ min: 0, max: 1000 }),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let now = 0
        const dedup = new Deduplicator({ now: () => now })
        const model = new Map<string, string>()
        for (const s of steps) {
          now += s.advanceMs
          const expected = !model.has(s.id)
            ? 'new'
            : model.get(s.id) === s.body
              ? 'duplicate'
              : 'conflict'
          if (!model.has(s.id)) model.set(s.id, s.body)
          expect(dedup.seen(s.id, s.body)).toBe(expected)
        }
      }),
      { numRuns },
    )
  })
})
