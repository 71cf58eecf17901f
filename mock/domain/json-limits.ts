/**
 * The document's JSON limits, depth 16 and 10,000 array elements in total, and the one walker that measures
 * a JSON value against them. Both uses go through it: Run input (Workflows and Runs, Run request rule 1:
 * RUN-026, RUN-027, 422 OUTPUT_LIMIT_EXCEEDED) and a JSON result (Limits > Sizes and counts: SIZE-006, the
 * execution fails with OUTPUT_LIMIT_EXCEEDED; the 10 MiB byte limit of results is in output-rules.ts).
 * Pure and iterative: a hostile nesting thousands deep cannot overflow the stack.
 */

/** RUN-026, SIZE-006: a JSON value nested deeper than this breaks the limits. */
export const JSON_MAX_DEPTH = 16
/** RUN-027, SIZE-006: more array elements than this, summed over every array at any depth, break them. */
export const JSON_MAX_ARRAY_ELEMENTS = 10_000
/** Digits grouped by thousands with commas (10,000): toLocaleString would load ICU data at start (~25 ms). */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ',')
/** The limits as the document words them, for messages. */
export const JSON_LIMITS_TEXT = `depth ${JSON_MAX_DEPTH}, ${grouped(JSON_MAX_ARRAY_ELEMENTS)} array elements in total`

/** Which limit a value broke. */
export type JsonLimit = 'DEPTH' | 'ARRAY_ELEMENTS'

/**
 * Depth and total array elements of a JSON value, and the limit broken first in walking order (null: none).
 * Depth counts containers ({} is 1, {"a":[]} is 2, a scalar 0); elements are summed over every array at
 * any depth. Counting stops once both limits are passed, so a huge value costs no more than needed: past
 * that point `depth` and `elements` are lower bounds (still over the limits).
 */
export type JsonShape = { depth: number; elements: number; over: JsonLimit | null }

/** Measures a JSON value (see JsonShape). Iterative, depth-first. */
export function jsonShape(value: unknown): JsonShape {
  let depth = 0
  let elements = 0
  let over: JsonLimit | null = null
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }]
  while (stack.length > 0) {
    const { v, d } = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    const here = d + 1
    if (here > depth) depth = here
    if (here > JSON_MAX_DEPTH) over ??= 'DEPTH'
    if (depth > JSON_MAX_DEPTH && elements > JSON_MAX_ARRAY_ELEMENTS) break
    if (Array.isArray(v)) {
      elements += v.length
      if (elements > JSON_MAX_ARRAY_ELEMENTS) over ??= 'ARRAY_ELEMENTS'
      for (const x of v) stack.push({ v: x, d: here })
    } else {
      for (const x of Object.values(v)) stack.push({ v: x, d: here })
    }
  }
  return { depth, elements, over }
}

/** What a Run input refusal tells (error.details of OUTPUT_LIMIT_EXCEEDED). */
export type JsonLimitProblem =
  { reason: 'DEPTH'; max_depth: number } | { reason: 'ARRAY_ELEMENTS'; max_array_elements: number }

/** RUN-026, RUN-027: whether Run input breaks the JSON limits, and which one it broke first. */
export function jsonLimitProblem(value: unknown): JsonLimitProblem | undefined {
  switch (jsonShape(value).over) {
    case 'DEPTH':
      return { reason: 'DEPTH', max_depth: JSON_MAX_DEPTH }
    case 'ARRAY_ELEMENTS':
      return { reason: 'ARRAY_ELEMENTS', max_array_elements: JSON_MAX_ARRAY_ELEMENTS }
    default:
      return undefined
  }
}
