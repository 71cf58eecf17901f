/**
 * Valid request bodies of Session creation (POST /v1/deployments/{deployment_id}/sessions), derived from the
 * interface document's bounds ("Turn input and request options", "Sizes and counts"): TEXT input items,
 * ExecutionLimits within their ranges (integers for seconds, max_su a number), metadata of at most 16 keys,
 * keys of 1 to 64 characters and string values of at most 512 characters. FILE items are left out: a valid
 * one needs a READY upload that no other execution has used.
 */
import fc from 'fast-check'

/** The document's bounds, in one place. */
export const SESSION_BOUNDS = {
  limits: {
    execution_seconds: { max: 3600, integer: true },
    max_su: { max: 100, integer: false },
    queue_seconds: { max: 600, integer: true },
  },
  metadata: { maxKeys: 16, keyMin: 1, keyMax: 64, valueMax: 512 },
  jsonBodyBytes: 64 * 1024,
} as const

export type LimitName = keyof typeof SESSION_BOUNDS.limits
export const LIMIT_NAMES = Object.keys(SESSION_BOUNDS.limits) as LimitName[]

export type TextItem = { type: 'TEXT'; text: string }
export type SessionBody = {
  input: TextItem[]
  limits?: Partial<Record<LimitName, number>>
  metadata?: Record<string, string>
}

/** One character: mostly visible ASCII and space, sometimes a precomposed non-ASCII letter (1 character, 2-3 bytes). */
export const character = (): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    },
    { weight: 1, arbitrary: fc.constantFrom('é', 'ß', 'ж', 'ü', '日', '本', '€') },
  )

/** A string of `minLength` to `maxLength` characters (each one UTF-16 unit and one code point). */
export const chars = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: character(), minLength, maxLength })

export const textItem = (): fc.Arbitrary<TextItem> =>
  fc.record({
    type: fc.constant('TEXT' as const),
    text: fc.string({ unit: 'grapheme', maxLength: 100 }),
  })

/** A metadata key within bounds (never `__proto__`, which JSON parsers treat specially). */
export const metadataKey = (
  min: number = SESSION_BOUNDS.metadata.keyMin,
  max: number = SESSION_BOUNDS.metadata.keyMax,
): fc.Arbitrary<string> => chars(min, max).filter((k) => k !== '__proto__')

export const metadataValue = (
  max: number = SESSION_BOUNDS.metadata.valueMax,
): fc.Arbitrary<string> => chars(0, max)

/** Metadata with `minKeys` to `maxKeys` distinct keys. */
export const metadata = (
  minKeys = 0,
  maxKeys: number = SESSION_BOUNDS.metadata.maxKeys,
  value: fc.Arbitrary<string> = metadataValue(),
): fc.Arbitrary<Record<string, string>> =>
  fc
    .uniqueArray(fc.tuple(metadataKey(), value), {
      minLength: minKeys,
      maxLength: maxKeys,
      selector: ([k]) => k,
    })
    .map((entries) => Object.fromEntries(entries))

/** A number in range for one limit: integer 1..max for seconds, a number in (0, 100] for max_su. */
export const limitValue = (name: LimitName): fc.Arbitrary<number> => {
  const { max, integer } = SESSION_BOUNDS.limits[name]
  return integer
    ? fc.integer({ min: 1, max })
    : fc.oneof(
        fc.integer({ min: 1, max }),
        fc.double({ min: 0.001, max, noNaN: true, noDefaultInfinity: true }),
      )
}

export const executionLimits = (): fc.Arbitrary<Partial<Record<LimitName, number>>> =>
  fc.record(
    {
      execution_seconds: limitValue('execution_seconds'),
      max_su: limitValue('max_su'),
      queue_seconds: limitValue('queue_seconds'),
    },
    { requiredKeys: [] },
  )

/** A valid Session creation body: 1 to 5 TEXT items, optional limits and metadata. */
export const sessionBody = (): fc.Arbitrary<SessionBody> =>
  fc.record(
    {
      input: fc.array(textItem(), { minLength: 1, maxLength: 5 }),
      limits: executionLimits(),
      metadata: metadata(),
    },
    { requiredKeys: ['input'] },
  )

/**
 * A small valid body, distinct per `tag` (so one Idempotency-Key always goes with one body), reserving
 * little SU (limits.max_su 1) so that many of them stay within a Project's daily budget on a real target.
 */
export const smallSessionBody = (tag: string): SessionBody => ({
  input: [{ type: 'TEXT', text: `conformance ${tag}` }],
  limits: { max_su: 1 },
})
