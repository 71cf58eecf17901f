import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  JSON_LIMITS_TEXT,
  JSON_MAX_ARRAY_ELEMENTS,
  JSON_MAX_DEPTH,
  jsonLimitProblem,
  jsonShape,
} from './json-limits.js'

/** A recursive reference count of depth and array elements (small values only). */
function naiveShape(v: unknown): { depth: number; elements: number } {
  if (v === null || typeof v !== 'object') return { depth: 0, elements: 0 }
  const kids = Array.isArray(v) ? v : Object.values(v)
  const shapes = kids.map(naiveShape)
  return {
    depth: 1 + Math.max(0, ...shapes.map((s) => s.depth)),
    elements: (Array.isArray(v) ? v.length : 0) + shapes.reduce((n, s) => n + s.elements, 0),
  }
}

/** The Run input check as it was before the walkers were merged: the first limit broken, depth-first. */
function referenceProblem(value: unknown): 'DEPTH' | 'ARRAY_ELEMENTS' | undefined {
  let elements = 0
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }]
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    const d = depth + 1
    if (d > 16) return 'DEPTH'
    if (Array.isArray(v)) {
      elements += v.length
      if (elements > 10_000) return 'ARRAY_ELEMENTS'
      for (const x of v) stack.push({ v: x, depth: d })
    } else {
      for (const x of Object.values(v)) stack.push({ v: x, depth: d })
    }
  }
  return undefined
}

/** {"a":{"a":...{}}} with `depth` containers. */
const nestedObject = (depth: number): unknown => {
  let v: unknown = {}
  for (let i = 1; i < depth; i++) v = { a: v }
  return v
}
/** [[...[]]] with `depth` containers. */
const nestedArray = (depth: number): unknown => {
  let v: unknown = []
  for (let i = 1; i < depth; i++) v = [v]
  return v
}

/** Values near both limits: deep chains, big flat arrays, mixed in objects and arrays. */
const nearLimits: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(0, 'x', null, true),
    fc.integer({ min: 1, max: 24 }).map(nestedObject),
    fc.integer({ min: 0, max: 6000 }).map((n) => Array.from({ length: n }, () => 0)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 4 }),
  ),
})).value

describe('JSON limits', () => {
  it('[SIZE-005][SIZE-006] counts depth and array elements of any JSON value as a recursive count does', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const { depth, elements } = jsonShape(v)
        expect({ depth, elements }).toEqual(naiveShape(v))
      }),
    )
  })

  it('[RUN-026][RUN-027] reports the limit a Run input breaks first, as the former input check did', () => {
    fc.assert(
      fc.property(nearLimits, (v) => {
        expect(jsonLimitProblem(v)?.reason).toBe(referenceProblem(v))
      }),
      { numRuns: 300 },
    )
  })

  it('[RUN-026][RUN-027][SIZE-006] allows exactly depth 16 and 10,000 elements in total, refuses one more', () => {
    expect(JSON_MAX_DEPTH).toBe(16)
    expect(JSON_MAX_ARRAY_ELEMENTS).toBe(10_000)
    expect(JSON_LIMITS_TEXT).toBe('depth 16, 10,000 array elements in total')
    expect(jsonLimitProblem(nestedObject(16))).toBeUndefined()
    expect(jsonLimitProblem(nestedArray(16))).toBeUndefined()
    expect(jsonLimitProblem(nestedObject(17))).toEqual({ reason: 'DEPTH', max_depth: 16 })
    expect(jsonLimitProblem({ a: nestedArray(16) })).toEqual({ reason: 'DEPTH', max_depth: 16 })
    const half = Array.from({ length: 5000 }, () => 0)
    expect(jsonLimitProblem({ a: half, b: [half] })).toEqual({
      reason: 'ARRAY_ELEMENTS',
      max_array_elements: 10_000,
    })
    expect(jsonLimitProblem({ a: half, b: half })).toBeUndefined()
    expect(jsonShape({ a: half, b: half })).toEqual({ depth: 2, elements: 10_000, over: null })
    expect(jsonLimitProblem('scalar')).toBeUndefined()
    expect(jsonShape(7)).toEqual({ depth: 0, elements: 0, over: null })
  })

  it('[RUN-026] walks a Run input nested 5,000 deep without overflowing the stack', () => {
    for (const deep of [nestedObject(5000), nestedArray(5000), { input: nestedObject(100_000) }]) {
      expect(() => jsonLimitProblem(deep)).not.toThrow()
      expect(jsonLimitProblem(deep)).toEqual({ reason: 'DEPTH', max_depth: 16 })
    }
    expect(jsonShape(nestedArray(5000))).toEqual({ depth: 5000, elements: 4999, over: 'DEPTH' })
  })

  it('[SIZE-006] stops counting once both limits are passed, still reporting both as over', () => {
    const many = Array.from({ length: 20_000 }, () => nestedObject(20))
    const shape = jsonShape(many)
    expect(shape.depth).toBeGreaterThan(16)
    expect(shape.elements).toBeGreaterThan(10_000)
    expect(shape.over).toBe('ARRAY_ELEMENTS')
  })
})
