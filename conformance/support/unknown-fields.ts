/**
 * Fields a response shows that the document does not name. undocumentedFields(pointer, value) walks a value
 * along the schema at a pointer of spec/openapi.yaml ($ref, allOf, the oneOf/anyOf branch the value matches,
 * items, properties, additionalProperties) and lists the undocumented fields as paths (`run.usage.new_field`,
 * `outputs[].extra`). An object is closed when its schema names properties and does not allow others
 * (additionalProperties true marks fields the document does not show, so such an object is open).
 *
 * reportUnknownFields fails or warns by the suite's strictness (support/strictness.ts);
 * expectDocumentedFields does both for a value a test reads itself (an SSE frame's JSON, a nested element).
 */
import { expect } from 'vitest'
import { escapePointer } from '../../spec/index.js'
import { envView, resolvePointer, validatorAt, type ContractView } from './operations.js'
import { isStrict } from './strictness.js'
import { warn } from './warnings.js'

/**
 * Fields the reference mock shows where the document names none, reported as warnings even when strict. Empty:
 * every field the mock sends is declared in spec/openapi.yaml (marked x-assumed where the document does not
 * show it), so the strict run fails on any other. An entry would be an open question for the document.
 */
export const UNSETTLED_FIELDS: Readonly<Record<string, readonly string[]>> = {}

export type Undocumented = {
  /** Fields no schema names: failures when strict, else warnings. */
  unknown: string[]
  /** Fields of UNSETTLED_FIELDS: always warnings. */
  unsettled: string[]
}

type Schema = Record<string, unknown>

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const schemaAt = (pointer: string): Schema | undefined => {
  const node = resolvePointer(pointer)
  return isObject(node) ? node : undefined
}

/**
 * The undocumented fields of a value against the schema at a pointer (`#/components/schemas/Run`). The view
 * (support/document-view.ts; default: the environment's target's) decides which oneOf/anyOf branch a value
 * takes: in the document view an error object with a code added after 1.3.0 still takes the PublicError branch.
 */
export function undocumentedFields(
  pointer: string,
  value: unknown,
  view: ContractView = envView(),
): Undocumented {
  const found = { unknown: new Set<string>(), unsettled: new Set<string>(), view }
  walk(pointer, value, '', found)
  return { unknown: [...found.unknown], unsettled: [...found.unsettled] }
}

/** The fields of a value that no schema names (UNSETTLED_FIELDS included). */
export function unknownFields(
  pointer: string,
  value: unknown,
  view: ContractView = envView(),
): string[] {
  const { unknown, unsettled } = undocumentedFields(pointer, value, view)
  return [...unknown, ...unsettled]
}

type Found = { unknown: Set<string>; unsettled: Set<string>; view: ContractView }

function walk(pointer: string, value: unknown, path: string, found: Found): void {
  if (Array.isArray(value)) {
    for (const p of applicable(pointer, value, found.view)) {
      if (isObject(schemaAt(p)?.items))
        for (const item of value) walk(`${p}/items`, item, `${path}[]`, found)
    }
    return
  }
  if (!isObject(value)) return
  const declared = new Map<string, string[]>()
  const others: string[] = []
  const unsettled = new Set<string>()
  let names = false
  let open = false
  for (const p of applicable(pointer, value, found.view)) {
    const schema = schemaAt(p)!
    if (isObject(schema.properties)) {
      names = true
      for (const key of Object.keys(schema.properties)) {
        const at = `${p}/properties/${escapePointer(key)}`
        declared.set(key, [...(declared.get(key) ?? []), at])
      }
    }
    if (schema.additionalProperties === true || schema.patternProperties !== undefined) open = true
    else if (schema.additionalProperties === false) names = true
    else if (isObject(schema.additionalProperties)) others.push(`${p}/additionalProperties`)
    for (const key of UNSETTLED_FIELDS[p] ?? []) unsettled.add(key)
  }
  for (const [key, v] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`
    const pointers = declared.get(key)
    if (pointers) for (const p of pointers) walk(p, v, at, found)
    else if (others.length > 0)
      for (const p of others) walk(p, v, path === '' ? '*' : `${path}.*`, found)
    else if (names && !open) (unsettled.has(key) ? found.unsettled : found.unknown).add(at)
  }
}

/** Every schema that applies to the value at a pointer: itself, its $ref, allOf, the matching oneOf/anyOf. */
function applicable(
  pointer: string,
  value: unknown,
  view: ContractView,
  seen = new Set<string>(),
): string[] {
  const schema = schemaAt(pointer)
  if (!schema || seen.has(pointer)) return []
  seen.add(pointer)
  const out = [pointer]
  if (typeof schema.$ref === 'string') out.push(...applicable(schema.$ref, value, view, seen))
  if (Array.isArray(schema.allOf))
    schema.allOf.forEach((_, i) =>
      out.push(...applicable(`${pointer}/allOf/${i}`, value, view, seen)),
    )
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const branch = matchingBranch(pointer, schema, keyword, value, view)
    if (branch) out.push(...applicable(branch, value, view, seen))
  }
  return out
}

function matchingBranch(
  pointer: string,
  schema: Schema,
  keyword: 'oneOf' | 'anyOf',
  value: unknown,
  view: ContractView,
): string | undefined {
  const branches = schema[keyword]
  if (!Array.isArray(branches)) return undefined
  const discriminator = schema.discriminator as
    { propertyName?: string; mapping?: Record<string, string> } | undefined
  const tag =
    discriminator?.propertyName && isObject(value) ? value[discriminator.propertyName] : undefined
  const mapped = typeof tag === 'string' ? discriminator?.mapping?.[tag] : undefined
  if (mapped) return mapped
  const index = branches.findIndex((_, i) => validatorAt(`${pointer}/${keyword}/${i}`, view)(value))
  return index < 0 ? undefined : `${pointer}/${keyword}/${index}`
}

/**
 * Reports the undocumented fields found at `where` (e.g. "getRun 200"): when strict, fail() is called with
 * the unknown ones; otherwise each is a warning, once per `where` and field. Unsettled fields always warn.
 */
export function reportUnknownFields(
  where: string,
  found: Undocumented,
  fail: (message: string) => never,
  strict: boolean = isStrict(),
): void {
  for (const field of found.unsettled) {
    warn(
      `${where}: ${field}`,
      `${where}: field ${field} is not named by the document (unsettled: UNSETTLED_FIELDS of conformance/support/unknown-fields.ts)`,
    )
  }
  if (found.unknown.length === 0) return
  if (strict) {
    fail(
      `undocumented field(s) ${found.unknown.join(', ')} (strict: CONFORMANCE_STRICT=1 or a mock target; ` +
        'CONFORMANCE_STRICT=0 makes them warnings)',
    )
  }
  for (const field of found.unknown) {
    warn(
      `${where}: ${field}`,
      `${where}: undocumented field ${field} (allowed: new response fields are additive within /v1)`,
    )
  }
}

const failExpect = (where: string) => (message: string) => expect.fail(`${where}: ${message}`)

/** A test's value against a schema of the document: undocumented fields fail when strict, else warn. */
export function expectDocumentedFields(
  pointer: string,
  value: unknown,
  where: string,
  strict: boolean = isStrict(),
  view: ContractView = envView(),
): void {
  reportUnknownFields(where, undocumentedFields(pointer, value, view), failExpect(where), strict)
}
