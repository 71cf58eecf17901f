import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { sha256, sha256Hex } from './sha256.js'

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

it('[IDEM-001][IDEM-002] gives the 32 bytes of the same digest', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (text) => {
      expect(sha256(text).equals(createHash('sha256').update(text).digest())).toBe(true)
    }),
    { numRuns: 50 },
  )
})
