/**
 * The two views of the contract the response checks judge a body by (issue #35):
 *
 *   full      spec/openapi.yaml as it is: the document's rules plus the mock's own choices (`x-assumed`) and
 *             the closed lists of 1.3.0 (error codes, content kinds). The mock, in this process or over HTTP,
 *             is held to it: the reference implementation must keep its own choices exactly.
 *   document  what the interface document itself says, derived here from the same parsed spec/openapi.yaml
 *             when first needed (no generated copy, no hand-written second schema). A real deployment is held
 *             to it: a conforming implementation may choose otherwise where the document is silent, and
 *             Versioning 2 lets /v1 add response fields, event types and error codes ("Clients must ignore
 *             or safely handle unknown fields, event types and error codes").
 *
 * The relaxation rule (documentView), applied to every schema of the document (components, and every `schema`
 * of a response, parameter or header), outermost first:
 *
 *   1. `x-assumed: true`   the whole shape is the mock's choice, the document gives none of it: the schema
 *                          becomes `{}` (any value). The parent's `required` list is kept: in this file a
 *                          required field is one the document names (e.g. usage `categories`: named, shape
 *                          assumed), so only its value is freed.
 *   2. `x-not-shown: true` the document names the thing and leaves the rest open ("never add required fields
 *                          there"): only its documented frame stays: `type`, `required`, `properties` (each
 *                          relaxed by these rules), `$ref` and allOf/anyOf/oneOf; everything else (`items`,
 *                          `enum`, `format`, bounds, `additionalProperties`) is dropped and other fields are
 *                          allowed.
 *   3. the error catalog   an `enum` holding exactly the catalog's codes (ErrorCode: error envelopes and the
 *                          error objects of executions, outputs and outcomes) becomes `type: string`: "new
 *                          codes may be added" (Errors, Versioning 2).
 *   4. content kinds       a oneOf discriminated by `kind` (ItemContent, the content of Session items) gains a
 *                          branch for an object whose `kind` is none of the mapped ones, and loses its
 *                          `discriminator`: a new event type brings its content, named by data.kind. Output
 *                          item types (TEXT, JSON, FILE, URL) stay closed: the document lists them as the kinds
 *                          of results and allows no other.
 *   5. closed objects      `additionalProperties: false` and `unevaluatedProperties: false` are removed: new
 *                          response fields are additive; unknown_response_fields reports them (a warning on a
 *                          real target).
 *
 * A response object (not a schema) marked `x-assumed` is a success status the document does not give (webhook
 * registration, rotation and replay, works, preparation answers): in the document view another 2xx of that
 * operation is judged as that answer (responseInView of support/operations.ts).
 *
 * Event types need no rule: the document names some and says "Complete list of event types: not shown", and
 * spec/openapi.yaml already types Event.type and WebhookNotification.type as plain strings (a test holds that).
 * Only response bodies are validated with the document view; request bodies keep the full view.
 */
import { ERROR_CATALOG, SpecAjv, loadOpenApi, type OpenApiDocument } from '../../spec/index.js'
import type { Target } from './target.js'

export type ContractView = 'full' | 'document'

/** The view a target is judged by: the document's alone for a real deployment, the full one for the mock. */
export const viewFor = (kind: Target['kind']): ContractView =>
  kind === 'real' ? 'document' : 'full'

type Schema = Record<string, unknown>

const isObject = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const CATALOG_CODES = new Set(Object.keys(ERROR_CATALOG))

/**
 * Keywords whose value is one subschema that relaxing loosens. Not `not` and `if`: freeing a negated schema or
 * a condition would tighten or redirect the schema around it, so they are copied as they are.
 */
const ONE = ['items', 'contains', 'propertyNames', 'then', 'else', 'additionalItems']
/** Keywords whose value is an array of subschemas. */
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems']
/** Keywords whose value maps names to subschemas. */
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']
/** What an `x-not-shown` schema keeps: its documented frame. */
const FRAME = ['type', 'required', 'properties', '$ref', 'allOf', 'anyOf', 'oneOf', 'description']

const isCatalogEnum = (values: unknown): boolean =>
  Array.isArray(values) &&
  values.length === CATALOG_CODES.size &&
  values.every((v) => typeof v === 'string' && CATALOG_CODES.has(v))

/** One schema of the document view (the rule of the module comment). */
export function relaxSchema(node: unknown): unknown {
  if (typeof node === 'boolean' || !isObject(node)) return node
  if (node['x-assumed'] === true) return {}
  let source: Schema = node
  if (node['x-not-shown'] === true)
    source = Object.fromEntries(Object.entries(node).filter(([k]) => FRAME.includes(k)))
  if (isCatalogEnum(source.enum)) {
    const { enum: _codes, ...rest } = source
    source = { ...rest, type: 'string' }
  }
  const out: Schema = {}
  for (const [key, value] of Object.entries(source)) {
    if ((key === 'additionalProperties' || key === 'unevaluatedProperties') && value === false)
      continue
    if (key === 'additionalProperties' || key === 'unevaluatedProperties' || ONE.includes(key))
      out[key] = relaxSchema(value)
    else if (MANY.includes(key) && Array.isArray(value)) out[key] = value.map(relaxSchema)
    else if (MAPS.includes(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, relaxSchema(v)]))
    else out[key] = value
  }
  return openKinds(out)
}

/** Rule 4: a oneOf discriminated by `kind` also accepts an object of another kind. */
function openKinds(schema: Schema): Schema {
  const discriminator = schema.discriminator
  if (!Array.isArray(schema.oneOf) || !isObject(discriminator)) return schema
  if (discriminator.propertyName !== 'kind' || !isObject(discriminator.mapping)) return schema
  const { discriminator: _closed, ...rest } = schema
  const known = Object.keys(discriminator.mapping)
  return {
    ...rest,
    oneOf: [
      ...schema.oneOf,
      {
        type: 'object',
        required: ['kind'],
        properties: { kind: { type: 'string', not: { enum: known } } },
        description: 'A content kind unknown to this version (document view).',
      },
    ],
  }
}

/** Every schema position of the document (outside schemas): relaxes the schemas found there. */
function relaxDocumentNode(node: unknown, key: string | undefined): unknown {
  if (Array.isArray(node)) return node.map((n) => relaxDocumentNode(n, undefined))
  if (!isObject(node)) return node
  if (key === 'schema') return relaxSchema(node)
  const out: Schema = {}
  for (const [k, v] of Object.entries(node)) {
    // `examples` hold data, not schemas; they are copied as they are.
    if (k === 'examples' || k === 'example') out[k] = v
    else if (k === 'schemas' && key === 'components' && isObject(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, relaxSchema(s)]))
    else out[k] = relaxDocumentNode(v, k)
  }
  return out
}

/**
 * The document view of an OpenAPI document: a relaxed deep copy (the input is not changed). Pointers outside
 * relaxed schemas are the same as in the input; inside a schema made `{}` they no longer exist.
 */
export function documentView(doc: OpenApiDocument): OpenApiDocument {
  return relaxDocumentNode(doc, undefined) as OpenApiDocument
}

let documentSchemas: SpecAjv | undefined

/** The process's SpecAjv of the document view of spec/openapi.yaml, made on first use. */
export const documentViewSchemas = (): SpecAjv =>
  (documentSchemas ??= new SpecAjv(documentView(loadOpenApi())))
