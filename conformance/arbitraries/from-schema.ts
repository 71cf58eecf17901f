/**
 * fast-check arbitraries derived from the JSON Schemas of spec/openapi.yaml, for the subset the document uses
 * in request bodies and parameters: type (one or a list), properties, required, additionalProperties (false,
 * true or a schema), propertyNames, minProperties/maxProperties, items, minItems/maxItems, uniqueItems, enum,
 * const, minimum/maximum, exclusiveMinimum/exclusiveMaximum, minLength/maxLength (counted in code points, as
 * JSON Schema does), pattern (fc.stringMatching), format (uuid, uri, date-time, email), oneOf/anyOf/allOf and
 * `$ref` into the document. Annotations (description, discriminator, x-*) are ignored.
 *
 * The values aim to be valid; a caller that needs certainty checks them with the document's own validator
 * (spec/openapi.ts), as the fuzz test does to label its bodies.
 */
import fc from 'fast-check'

export type Schema = Record<string, unknown>

export type FromSchemaOptions = {
  /** The document that `$ref`s (`#/components/...`) point into. */
  root: unknown
  /**
   * Arbitraries used (most of the time) for a property of this name, e.g. ids of resources that exist, so that
   * schema-valid bodies also reach the rules behind validation.
   */
  hints?: Record<string, fc.Arbitrary<unknown>>
  /** Longest string drawn where the schema sets no maxLength (default 24). */
  maxStringLength?: number
  /** Most array items or open-object keys where the schema sets no bound (default 4). */
  maxItems?: number
}

const isObject = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Follows a local `$ref` (`#/a/b`) into the document. */
export function deref(schema: unknown, root: unknown): unknown {
  let node = schema
  for (let hops = 0; isObject(node) && typeof node.$ref === 'string' && hops < 32; hops++) {
    const ref = node.$ref
    if (!ref.startsWith('#/')) throw new Error(`only local $ref is supported: ${ref}`)
    node = ref
      .slice(2)
      .split('/')
      .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((acc, key) => (isObject(acc) ? acc[key] : undefined), root)
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`)
  }
  return node
}

/**
 * One character of a generated string: mostly printable ASCII, sometimes any Unicode scalar value (controls,
 * combining marks, astral planes). One unit is one code point, so fc's lengths are JSON Schema lengths.
 */
export const codePoint = (): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 0, max: 0x10ffff })
        .filter((c) => c < 0xd800 || c > 0xdfff)
        .map((c) => String.fromCodePoint(c)),
    },
  )

/** A string of minLength..maxLength code points, sometimes exactly at a bound. */
function boundedString(min: number, max: number, cap: number): fc.Arbitrary<string> {
  const upper = Math.max(min, Math.min(max, Math.max(cap, min)))
  const arbs: fc.WeightedArbitrary<string>[] = [
    { weight: 6, arbitrary: fc.string({ unit: codePoint(), minLength: min, maxLength: upper }) },
  ]
  if (Number.isFinite(max)) {
    arbs.push({
      weight: 1,
      arbitrary: codePoint().map((c) => c.repeat(max)),
    })
  }
  if (min > 0) arbs.push({ weight: 1, arbitrary: codePoint().map((c) => c.repeat(min)) })
  return fc.oneof(...arbs)
}

const codePoints = (s: string): number => [...s].length

function stringArb(s: Schema, opts: Required<Omit<FromSchemaOptions, 'hints'>>) {
  const min = typeof s.minLength === 'number' ? s.minLength : 0
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity
  const inBounds = (v: string) => codePoints(v) >= min && codePoints(v) <= max
  switch (s.format) {
    case 'uuid':
      return fc.uuid()
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'], withQueryParameters: true }).filter(inBounds)
    case 'date-time':
      return fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2099-12-31T23:59:59Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString())
    case 'email':
      return fc.emailAddress().filter(inBounds)
  }
  if (typeof s.pattern === 'string') {
    return fc.stringMatching(new RegExp(s.pattern, 'u')).filter(inBounds)
  }
  return boundedString(min, max, opts.maxStringLength)
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined)
  const exMin = num('exclusiveMinimum')
  const exMax = num('exclusiveMaximum')
  if (integer) {
    const min = num('minimum') ?? (exMin === undefined ? -(2 ** 31) : Math.floor(exMin) + 1)
    const max = num('maximum') ?? (exMax === undefined ? 2 ** 31 - 1 : Math.ceil(exMax) - 1)
    return fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
  }
  const min = num('minimum') ?? exMin ?? -1e9
  const max = num('maximum') ?? exMax ?? 1e9
  return fc.oneof(
    fc
      .integer({ min: Math.ceil(min), max: Math.floor(max) })
      .filter((v) => v !== exMin && v !== exMax),
    fc.double({
      min,
      max,
      minExcluded: exMin !== undefined && num('minimum') === undefined,
      maxExcluded: exMax !== undefined && num('maximum') === undefined,
      noNaN: true,
      noDefaultInfinity: true,
    }),
  )
}

/** A small JSON value of any type (open schemas, `additionalProperties: true`). */
export const anyJson = (): fc.Arbitrary<unknown> =>
  fc.jsonValue({ maxDepth: 2, depthSize: 'small' }).map((v) => JSON.parse(JSON.stringify(v)))

/** An arbitrary of values valid against `schema` (see the module comment for the supported subset). */
export function fromSchema(schema: unknown, options: FromSchemaOptions): fc.Arbitrary<unknown> {
  const opts = { maxStringLength: 24, maxItems: 4, ...options }
  const go = (node: unknown): fc.Arbitrary<unknown> => {
    const s = deref(node, opts.root)
    if (s === true || s === undefined) return anyJson()
    if (!isObject(s)) throw new Error(`not a schema: ${JSON.stringify(s)}`)
    if ('const' in s) return fc.constant(s.const)
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]))
    const alternatives = (s.oneOf ?? s.anyOf) as unknown[] | undefined
    if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map(go))
    if (Array.isArray(s.allOf)) return go(mergeAllOf(s, opts.root))
    const types = Array.isArray(s.type)
      ? (s.type as string[])
      : typeof s.type === 'string'
        ? [s.type]
        : [inferType(s)]
    return fc.oneof(...types.map((t) => forType(t, s)))
  }

  const forType = (type: string, s: Schema): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null)
      case 'boolean':
        return fc.boolean()
      case 'integer':
        return numberArb(s, true)
      case 'number':
        return numberArb(s, false)
      case 'string':
        return stringArb(s, opts)
      case 'array':
        return arrayArb(s)
      case 'object':
        return objectArb(s)
      default:
        return anyJson()
    }
  }

  const arrayArb = (s: Schema): fc.Arbitrary<unknown[]> => {
    const item = go(s.items ?? true)
    const minLength = typeof s.minItems === 'number' ? s.minItems : 0
    const maxLength = Math.max(
      minLength,
      typeof s.maxItems === 'number' ? s.maxItems : opts.maxItems,
    )
    return s.uniqueItems === true
      ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
      : fc.array(item, { minLength, maxLength })
  }

  const objectArb = (s: Schema): fc.Arbitrary<Record<string, unknown>> => {
    const properties = (isObject(s.properties) ? s.properties : {}) as Record<string, unknown>
    const required = (Array.isArray(s.required) ? s.required : []) as string[]
    const declared = Object.keys(properties)
    const fields: Record<string, fc.Arbitrary<unknown>> = {}
    for (const name of declared) fields[name] = withHint(name, go(properties[name]))
    for (const name of required) fields[name] ??= withHint(name, anyJson())
    const record = fc.record(fields, { requiredKeys: required })
    const extraSchema = s.additionalProperties
    const maxProperties = typeof s.maxProperties === 'number' ? s.maxProperties : Infinity
    const minProperties = typeof s.minProperties === 'number' ? s.minProperties : 0
    const extras =
      extraSchema === undefined || extraSchema === false
        ? fc.constant({})
        : fc.dictionary(
            go(s.propertyNames ?? { type: 'string', minLength: 1, maxLength: 16 }).filter(
              (k): k is string =>
                typeof k === 'string' && !declared.includes(k) && k !== '__proto__',
            ),
            go(extraSchema),
            {
              maxKeys: Math.min(maxProperties, opts.maxItems * 4),
              noNullPrototype: true,
            },
          )
    return fc
      .tuple(record, extras)
      .map(([fixed, extra]) => {
        const room = Math.max(0, maxProperties - Object.keys(fixed).length)
        const kept = Object.entries(extra).slice(0, room)
        return { ...Object.fromEntries(kept), ...fixed } as Record<string, unknown>
      })
      .filter((o) => Object.keys(o).length >= minProperties)
  }

  const withHint = (name: string, arb: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => {
    const hint = opts.hints?.[name]
    return hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: arb }) : arb
  }

  return go(schema)
}

function inferType(s: Schema): string {
  if ('properties' in s || 'additionalProperties' in s || 'required' in s) return 'object'
  if ('items' in s) return 'array'
  if ('minLength' in s || 'maxLength' in s || 'pattern' in s || 'format' in s) return 'string'
  if ('minimum' in s || 'maximum' in s) return 'number'
  return 'any'
}

/** allOf of object schemas, merged (properties and required united; other keywords from the last). */
function mergeAllOf(s: Schema, root: unknown): Schema {
  const parts = (s.allOf as unknown[]).map((p) => deref(p, root) as Schema)
  const { allOf: _allOf, ...rest } = s
  const merged: Schema = { ...rest }
  for (const p of parts) {
    Object.assign(merged, p, {
      properties: { ...(merged.properties as Schema), ...(p.properties as Schema) },
      required: [
        ...((merged.required as string[] | undefined) ?? []),
        ...((p.required as string[] | undefined) ?? []),
      ],
    })
  }
  return merged
}
