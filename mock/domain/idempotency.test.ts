import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson, requestFingerprint } from './idempotency.js'

/** canonicalJson as it was before it became iterative (recursive), the reference for small values. */
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceCanonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** JSON values plus what a parsed body never holds but callers might pass: undefined, sparse arrays. */
const loose: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.sparseArray(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 5 }),
  ),
})).value

const nested = (depth: number, array: boolean): unknown => {
  let v: unknown = array ? [] : {}
  for (let i = 1; i < depth; i++) v = array ? [v] : { a: v }
  return v
}

describe('idempotency fingerprint', () => {
  it('[IDEM-001][IDEM-002] serialises any value exactly as the former recursive canonical JSON did', () => {
    fc.assert(
      fc.property(loose, (v) => {
        expect(canonicalJson(v)).toBe(referenceCanonical(v))
      }),
      { numRuns: 500 },
    )
  })

  it('[IDEM-001][IDEM-002] fingerprints equal bodies alike whatever their key order, other bodies not', () => {
    const body = { input: { b: [1, { y: 2, x: 1 }], a: 'z' }, published_version: 1 }
    const reordered = { published_version: 1, input: { a: 'z', b: [1, { x: 1, y: 2 }] } }
    const fp = (b: unknown) => requestFingerprint({ operationId: 'createRun', path: '/p', body: b })
    expect(fp(reordered)).toBe(fp(body))
    expect(fp({ ...body, published_version: 2 })).not.toBe(fp(body))
    expect(canonicalJson(reordered)).toBe(
      '{"input":{"a":"z","b":[1,{"x":1,"y":2}]},"published_version":1}',
    )
  })

  it('[IDEM-005][RUN-026] fingerprints a body nested 5,000 deep without overflowing the stack', () => {
    const n = 5000
    expect(canonicalJson(nested(n, false))).toBe(`${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`)
    expect(canonicalJson(nested(n, true))).toBe(`${'['.repeat(n)}${']'.repeat(n)}`)
    const body = { published_version: 1, input: nested(n, false) }
    expect(() =>
      requestFingerprint({ operationId: 'createRun', path: '/v1/workflows/w/runs', body }),
    ).not.toThrow()
    expect(() => canonicalJson({ deeper: nested(100_000, true) })).not.toThrow()
  })

  it('[IDEM-001] refuses a cyclic value instead of looping', () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = { back: cyclic }
    expect(() => canonicalJson(cyclic)).toThrow(TypeError)
    const shared = { x: 1 }
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}')
  })
})
