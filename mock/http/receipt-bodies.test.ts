/**
 * [IDEM-001] A replay answers the very text of the first answer. A receipt carried by its execution's row is
 * kept only when the row rebuilds that text (route.ts idempotent); the check compares the answer's fields
 * instead of serialising it a second time, so it must never report a rebuilt answer the same when its JSON
 * text differs (a false "same" would replay another text; a false "different" only writes a receipt row).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { CarriedAnswer } from '../store/carried-receipts.js'
import { iso } from '../util/iso.js'
import {
  carriedAnswerJson,
  rebuildsAnswer,
  runReceiptBody,
  turnReceiptBody,
} from './receipt-bodies.js'

const EXPIRES = Date.UTC(2026, 0, 2, 3, 4, 5)
const TURN: CarriedAnswer = { kind: 'TURN', id: 't-1', session_id: 's-1' }
const RUN: CarriedAnswer = { kind: 'RUN', id: 'r-1', session_id: null }
const answerOf = (a: CarriedAnswer): Record<string, unknown> =>
  a.kind === 'RUN'
    ? runReceiptBody(a.id, iso(EXPIRES))
    : turnReceiptBody(a.session_id!, a.id, iso(EXPIRES))

/** A change to an answer's body: a value replaced, a key removed or added, the keys reordered. */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('value' as const),
    at: fc.nat(),
    value: fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.constant(undefined),
      fc.dictionary(fc.string(), fc.string()),
    ),
  }),
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('add' as const),
    key: fc.string(),
    value: fc.oneof(fc.string(), fc.constant(undefined)),
  }),
  fc.record({ kind: fc.constant('rotate' as const), by: fc.nat() }),
)

function mutated(
  body: Record<string, unknown>,
  m: typeof mutation extends fc.Arbitrary<infer T> ? T : never,
): Record<string, unknown> {
  const entries = Object.entries(body)
  const i = 'at' in m ? m.at % entries.length : 0
  if (m.kind === 'value') entries[i] = [entries[i]![0], m.value]
  if (m.kind === 'drop') entries.splice(i, 1)
  if (m.kind === 'add') entries.push([m.key, m.value])
  if (m.kind === 'rotate') entries.push(...entries.splice(0, m.by % entries.length))
  return Object.fromEntries(entries)
}

describe('[IDEM-001] a carried receipt is kept only when its row rebuilds the very answer', () => {
  it.each([
    ['a Turn', TURN],
    ['a Run', RUN],
  ])('the answer to %s is rebuilt from its row', (_, a) => {
    expect(rebuildsAnswer(a, EXPIRES, answerOf(a))).toBe(true)
  })

  it('another expiry or another execution is not the same answer', () => {
    expect(rebuildsAnswer(TURN, EXPIRES + 1000, answerOf(TURN))).toBe(false)
    expect(rebuildsAnswer({ ...TURN, id: 't-2' }, EXPIRES, answerOf(TURN))).toBe(false)
    expect(rebuildsAnswer(RUN, EXPIRES, answerOf(TURN))).toBe(false)
    expect(rebuildsAnswer(TURN, EXPIRES, null)).toBe(false)
    expect(rebuildsAnswer(TURN, EXPIRES, [answerOf(TURN)])).toBe(false)
  })

  it('a body called the same serialises to the very text rebuilt, whatever is changed in it', () => {
    fc.assert(
      fc.property(fc.constantFrom(TURN, RUN), mutation, (a, m) => {
        const body = mutated(answerOf(a), m)
        const sameText = JSON.stringify(body) === carriedAnswerJson(a, EXPIRES)
        // Called the same: the very text. The same text in string fields only: called the same.
        if (rebuildsAnswer(a, EXPIRES, body)) expect(sameText).toBe(true)
        if (sameText && Object.values(body).every((v) => typeof v === 'string'))
          expect(rebuildsAnswer(a, EXPIRES, body)).toBe(true)
      }),
      { numRuns: 500 },
    )
  })
})
