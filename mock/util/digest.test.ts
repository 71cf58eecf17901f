import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { sha256Hex } from './digest.js'

it('[IDEM-001][IDEM-002] gives (for request fingerprints) the SHA-256 of text (as UTF-8) and of bytes that a Hash object gives', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.uint8Array({ maxLength: 300 })),
      (data) => {
        expect(sha256Hex(data)).toBe(createHash('sha256').update(data).digest('hex'))
      },
    ),
    { numRuns: 100 },
  )
})
